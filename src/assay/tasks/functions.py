"""``!function module.name`` references: Python callables named by a task YAML.

lm-eval imports ``module`` from ``module.py`` next to the YAML (dots are sub-directories),
falling back to an importable module of that name. A ``FunctionRef`` records the reference
where the YAML wrote it (file and line) and resolves it either at load time (so a wrong name
is reported with its key path before anything runs) or on first call (so listing a
directory of tasks never executes their code).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.tasks.lmeval_compat import lmeval_imports
from assay.tasks.lmeval_compat.bridge import mirror_real_registrations

_LOCK = threading.Lock()
_MODULES: dict[tuple[str, int], ModuleType] = {}


class FunctionRefError(ValueError):
    """A ``!function`` reference cannot be resolved; the message says what was looked for."""


class FunctionRef:
    """A ``!function`` value: callable, resolving the reference on first use."""

    def __init__(self, spec: str, *, file: Path, line: int | None = None) -> None:
        self.spec = spec
        self.file = file
        self.line = line
        self._target: Callable[..., Any] | None = None

    @property
    def __name__(self) -> str:  # a metric given as a function is named after it
        return self.spec.rpartition(".")[2]

    def resolve(self) -> Callable[..., Any]:
        """The referenced callable; raises ``FunctionRefError`` saying why not."""
        if self._target is None:
            # lm-eval resolves the YAML's path (symlinks followed) and looks next to it
            self._target = import_function(self.spec, self.file.resolve().parent)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"!function {self.spec}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionRef) and (other.spec, other.file) == (self.spec, self.file)

    def __hash__(self) -> int:
        return hash((self.spec, self.file))


def import_function(spec: str, base_dir: Path) -> Callable[..., Any]:
    """``module.name`` from ``base_dir/module.py`` (``a.b.name`` from ``a/b.py``), else from
    the importable module ``module``; the attribute must be callable."""
    module_path, _, name = spec.strip().rpartition(".")
    if not module_path or not name:
        raise FunctionRefError(
            f"'!function {spec}' must name module.function (e.g. utils.process_docs)"
        )
    local = base_dir / f"{module_path.replace('.', '/')}.py"
    if local.is_file():
        module = _load_file_module(local)
        where = str(local)
    else:
        try:
            with lmeval_imports(base_dir):
                module = importlib.import_module(module_path)
        except ImportError as exc:
            raise FunctionRefError(
                f"'!function {spec}': no file {local.name} next to the YAML ({base_dir}) and "
                f"no importable module '{module_path}' ({exc})"
            ) from None
        where = f"module '{module_path}'"
    try:
        target = getattr(module, name)
    except AttributeError:
        raise FunctionRefError(f"'!function {spec}': {where} has no attribute '{name}'") from None
    if not callable(target):
        raise FunctionRefError(f"'!function {spec}': '{name}' in {where} is not callable")
    result: Callable[..., Any] = target
    return result


def _load_file_module(path: Path) -> ModuleType:
    """Execute ``path`` as a module once per version of the file (keyed by mtime)."""
    resolved = path.resolve()
    stamp = resolved.stat().st_mtime_ns
    key = (str(resolved), stamp)
    with _LOCK:
        cached = _MODULES.get(key)
        if cached is not None:
            return cached
        digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
        name = f"assay_task_modules.{resolved.stem}_{digest}"
        spec = importlib.util.spec_from_file_location(name, resolved)
        if spec is None or spec.loader is None:
            raise FunctionRefError(f"cannot load {resolved} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        try:
            with lmeval_imports(resolved.parent):
                spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # task code may even exit on import
            sys.modules.pop(name, None)
            raise FunctionRefError(
                f"importing {resolved} failed: {type(exc).__name__}: {exc}{_hint(exc)}"
            ) from exc
        mirror_real_registrations()
        _MODULES[key] = module
        return module


def _hint(exc: BaseException) -> str:
    """Where to look when task code imports an ``lm_eval`` name assay does not provide."""
    name = getattr(exc, "name", None) or ""
    if isinstance(exc, ImportError) and (name == "lm_eval" or name.startswith("lm_eval.")):
        return " (docs/tasks.md lists the lm_eval names assay provides)"
    return ""
