"""The scoped import shim: ``import lm_eval...`` inside task code, without lm-eval.

While ``lmeval_imports(base_dir)`` is active (assay wraps the loading of every ``!function``
module in it), a meta-path finder answers imports of ``lm_eval`` and the submodules listed in
``SUPPORTED`` with modules built from assay's equivalents, but only when the real lm-eval
cannot be imported (not installed, or installed without its dependencies so that importing
it fails): with a working lm-eval the real one is used, so behaviour is lm-eval's own.

* Each shim module exposes exactly the names in ``SUPPORTED``; any other name fails the
  import with one line naming it (``cannot import name 'x' from 'lm_eval.utils'``), and an
  unsupported submodule fails naming the submodule.
* ``lm_eval.tasks.<folder>.<module>`` (catalogue files importing their siblings) is looked up
  in the folders above the file being loaded, nearest first, so a copied catalogue imports
  its own modules.
* Modules created stay in ``sys.modules`` (task functions may import at call time); the
  finder itself is removed when the block ends.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

SHIM_MARK = "__assay_lmeval_shim__"
"""Attribute set on every module the shim creates."""

_API = "assay.tasks.lmeval_compat.api"
_FILTERS = "assay.tasks.lmeval_compat.filters"
_UTILS = "assay.tasks.lmeval_compat.utils"
_AGG = "assay.tasks.metrics.aggregations"
_STDERR = "assay.tasks.metrics.stderr"

_FILTER_CLASSES = ("RegexFilter", "MultiChoiceRegexFilter", "POSFilter", "WhitespaceFilter")

SUPPORTED: dict[str, dict[str, tuple[str, str]]] = {
    "lm_eval": {},
    "lm_eval.api": {},
    "lm_eval.api.filter": {n: (_API, n) for n in ("Filter", "FilterEnsemble")},
    "lm_eval.api.instance": {n: (_API, n) for n in ("Instance", "OutputType")},
    "lm_eval.api.registry": {
        n: (_API, n)
        for n in (
            "register_filter",
            "get_filter",
            "register_metric",
            "get_metric",
            "register_aggregation",
            "get_aggregation",
            "get_metric_aggregation",
            "is_higher_better",
        )
    },
    "lm_eval.api.metrics": {
        **{
            n: (_AGG, n)
            for n in (
                "mean",
                "median",
                "nanmean",
                "perplexity",
                "weighted_perplexity",
                "bits_per_byte",
                "matthews_corrcoef",
                "bleu",
                "chrf",
                "ter",
                "brier_score",
                "acc_all",
            )
        },
        "f1_score": (_AGG, "f1"),
        "bypass_agg": (_AGG, "bypass"),
        **{n: (_STDERR, n) for n in ("mean_stderr", "sample_stddev", "acc_all_stderr")},
        **{
            n: (_UTILS, n) for n in ("metric_max_over_ground_truths", "weighted_mean", "pop_stddev")
        },
    },
    "lm_eval.filters": {"build_filter_ensemble": (_API, "build_filter")},
    "lm_eval.filters.extraction": {
        "Filter": (_API, "Filter"),
        "register_filter": (_API, "register_filter"),
        **{n: (_FILTERS, n) for n in _FILTER_CLASSES},
    },
    "lm_eval.filters.selection": {
        "Filter": (_API, "Filter"),
        **{n: (_FILTERS, n) for n in ("TakeFirstFilter", "TakeKFilter", "MajorityVoteFilter")},
    },
    "lm_eval.filters.transformation": {
        "Filter": (_API, "Filter"),
        **{
            n: (_FILTERS, n)
            for n in ("LowercaseFilter", "UppercaseFilter", "MapFilter", "SPANFilter")
        },
    },
    "lm_eval.filters.custom": {
        "Filter": (_API, "Filter"),
        "CustomFilter": (_FILTERS, "CustomFilter"),
    },
    "lm_eval.utils": {
        n: (_UTILS, n)
        for n in (
            "eval_logger",
            "weighted_f1_score",
            "general_detokenize",
            "regex_replace",
            "hash_string",
            "softmax",
            "handle_non_serializable",
            "simple_parse_args_string",
            "positional_deprecated",
        )
    },
}
"""Every ``lm_eval`` module the shim provides, and its names (name → assay module, attribute)."""

_PACKAGES = frozenset({"lm_eval", "lm_eval.api", "lm_eval.filters"})
_PROBED = ("lm_eval.api.registry", "lm_eval.filters.extraction", "lm_eval.utils")
_TASKS = "lm_eval.tasks"
_ANCESTORS = 6
"""How many folders above a task file ``lm_eval.tasks.*`` imports are looked up in."""

_LOCK = threading.RLock()
_state: dict[str, Any] = {"real": None, "probing": False, "depth": 0}
_bases: list[Path] = []


def real_lmeval_usable() -> bool:
    """Whether the real lm-eval imports (checked once per process, without the shim)."""
    with _LOCK:
        if _state["real"] is None:
            _state["real"] = _probe()
        return bool(_state["real"])


def _probe() -> bool:
    loaded = sys.modules.get("lm_eval")
    if loaded is not None:
        return not getattr(loaded, SHIM_MARK, False)
    _state["probing"] = True
    try:
        if importlib.util.find_spec("lm_eval") is None:
            return False
        for name in _PROBED:
            importlib.import_module(name)
        return True
    except Exception:  # installed without its dependencies: torch, evaluate, ...
        for name in [n for n in sys.modules if n == "lm_eval" or n.startswith("lm_eval.")]:
            del sys.modules[name]
        return False
    finally:
        _state["probing"] = False


class _ShimLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _shim_module(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Filled in ``create_module``."""


def _shim_module(name: str) -> ModuleType:
    module = ModuleType(name, f"assay's stand-in for {name} (lm-eval is not importable)")
    setattr(module, SHIM_MARK, True)
    names = SUPPORTED[name]
    for attr, (source, target) in names.items():
        setattr(module, attr, getattr(importlib.import_module(source), target))
    module.__all__ = sorted(names)  # type: ignore[attr-defined]
    if name == "lm_eval":
        module.__version__ = "0.4.13"  # type: ignore[attr-defined]
    if name in _PACKAGES:
        module.__path__ = []

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        known = ", ".join(sorted(names)) or "none"
        raise AttributeError(
            f"{name}.{attr} is not provided by assay's lm-eval compatibility layer "
            f"(it provides: {known}); install lm-eval to use it"
        )

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def _tasks_module() -> ModuleType:
    module = ModuleType(_TASKS, "catalogue folders above the task file being loaded")
    setattr(module, SHIM_MARK, True)
    module.__path__ = _search_path()
    return module


def _search_path() -> list[str]:
    out: list[str] = []
    for base in reversed(_bases):
        for folder in [base, *list(base.parents)[: _ANCESTORS - 1]]:
            if str(folder) not in out:
                out.append(str(folder))
    return out


class _TasksLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _tasks_module()

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module only carries the search path."""


class _ShimFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "lm_eval" and not fullname.startswith("lm_eval."):
            return None
        if _state["probing"] or real_lmeval_usable():
            return None
        if fullname in SUPPORTED:
            return importlib.machinery.ModuleSpec(
                fullname, _ShimLoader(), is_package=fullname in _PACKAGES
            )
        if fullname == _TASKS:
            return importlib.machinery.ModuleSpec(fullname, _TasksLoader(), is_package=True)
        if fullname.startswith(_TASKS + "."):
            return None  # found by the path finder in lm_eval.tasks.__path__
        raise ModuleNotFoundError(
            f"{fullname} is not provided by assay's lm-eval compatibility layer (it provides "
            f"{', '.join(sorted(SUPPORTED))} and the catalogue's own lm_eval.tasks modules); "
            "install lm-eval to use it",
            name=fullname,
        )


_FINDER = _ShimFinder()


@contextmanager
def lmeval_imports(base_dir: Path) -> Iterator[None]:
    """Within the block, ``import lm_eval...`` resolves as described in the module doc;
    ``base_dir`` is the folder of the task file being loaded."""
    with _LOCK:
        _bases.append(base_dir.resolve())
        tasks = sys.modules.get(_TASKS)
        if tasks is not None and getattr(tasks, SHIM_MARK, False):
            tasks.__path__ = _search_path()
        if _state["depth"] == 0:
            sys.meta_path.insert(0, _FINDER)
        _state["depth"] += 1
        try:
            yield
        finally:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _FINDER in sys.meta_path:
                sys.meta_path.remove(_FINDER)
            _bases.pop()
