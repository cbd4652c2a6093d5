"""How much of a task catalogue validates: every task and group YAML under a folder, loaded
the way ``assay tasks validate`` loads one (includes merged, every ``!function`` imported,
filter, metric and aggregation names checked).

Users bring lm-evaluation-harness's catalogue as it is, so the honest measure of "assay runs
lm-eval tasks" is the share of that whole catalogue that loads, not a hand-picked list.
``measure_catalogue(root)`` walks ``root``, skips templates (no ``task:``/``group:`` after
includes) and multimodal tasks (``doc_to_image``/``doc_to_audio``, which assay reports as
unsupported by design), validates the rest and returns the count and every failure with a
one-line reason. ``installed_lmeval_tasks()`` finds the installed ``lm_eval`` package's
``tasks`` folder without importing ``lm_eval`` (importing it pulls torch in some installs).
"""

from __future__ import annotations

import importlib.machinery
import logging
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.tasks.errors import TaskConfigError
from assay.tasks.yaml_loader import YAML_SUFFIXES, config_from_raw, read_config

_SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints"})


@dataclass(frozen=True)
class CatalogueFailure:
    """One YAML that does not validate: its path relative to the root, and why (one line)."""

    path: str
    reason: str


@dataclass(frozen=True)
class CatalogueCoverage:
    """The result of validating every non-multimodal task and group YAML under ``root``."""

    root: Path
    total: int
    valid: int
    multimodal: int
    failures: list[CatalogueFailure] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The valid share of the counted YAMLs (``0.0`` when there are none)."""
        return self.valid / self.total if self.total else 0.0

    def reasons(self) -> Counter[str]:
        """How many failures share each reason class (``reason_class``)."""
        return Counter(reason_class(f.reason) for f in self.failures)


def installed_lmeval_tasks() -> Path | None:
    """The ``tasks`` folder of the installed ``lm_eval`` package, found without importing it
    (``None`` when lm-eval is not installed)."""
    try:  # the path finder only: not sys.modules, where assay's stand-in may sit
        spec = importlib.machinery.PathFinder.find_spec("lm_eval")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        tasks = Path(location) / "tasks"
        if tasks.is_dir():
            return tasks
    return None


def catalogue_yamls(root: Path) -> Iterator[Path]:
    """Every YAML file under ``root``, sorted, caches and checkpoints left out."""
    for path in sorted(root.rglob("*")):
        skipped = _SKIPPED_PARTS.intersection(path.relative_to(root).parts)
        if path.suffix in YAML_SUFFIXES and path.is_file() and not skipped:
            yield path


def measure_catalogue(root: str | Path) -> CatalogueCoverage:
    """Validate every task and group YAML under ``root`` (multimodal ones counted apart)."""
    base = Path(root).expanduser().absolute()
    if not base.is_dir():
        raise TaskConfigError("not a directory", file=base)
    total = valid = multimodal = 0
    failures: list[CatalogueFailure] = []
    quiet = logging.getLogger("assay.tasks")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # duplicate-key warnings of the catalogue's own files
    try:
        for path in catalogue_yamls(base):
            relative = path.relative_to(base).as_posix()
            try:
                raw = read_config(path)
            except TaskConfigError as exc:
                total += 1
                failures.append(CatalogueFailure(relative, one_line(exc, base)))
                continue
            data = raw.data
            if "task" not in data and "group" not in data:
                continue  # a template, meant to be included
            if data.get("doc_to_image") is not None or data.get("doc_to_audio") is not None:
                multimodal += 1
                continue
            total += 1
            try:
                config_from_raw(raw, resolve_functions=True)
            except (Exception, SystemExit) as exc:  # task code may raise anything, or exit
                failures.append(CatalogueFailure(relative, one_line(exc, base)))
            else:
                valid += 1
    finally:
        quiet.setLevel(level)
    return CatalogueCoverage(base, total, valid, multimodal, failures)


def one_line(exc: BaseException, root: Path) -> str:
    """The first problem of an error on one line, with paths shown relative to ``root``."""
    if isinstance(exc, TaskConfigError):
        issue = exc.issues[0]
        text = ": ".join(str(p) for p in (issue.key, issue.message) if p)
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = text.replace(str(root) + "/", "").replace(str(root.resolve()) + "/", "")
    text = _ADDRESS.sub("", _ABSOLUTE.sub("", text))  # nothing that varies between machines
    text = re.sub(r"\s+", " ", text).strip()
    return text[:300]


_ABSOLUTE = re.compile(r" ?\(/[^)]*\)")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def reason_class(reason: str) -> str:
    """A short class of a failure reason, for counting (``missing module evaluate``)."""
    missing = _MISSING_MODULE.search(reason)
    if missing:
        return f"missing module {missing.group(1).split('.')[0]}"
    if "Python task class" in reason:
        return "Python task class"
    if "failed: " in reason:
        error = reason.split("failed: ", 1)[1]
        return "task code fails on import: " + _clip(error)
    return _clip(reason.split(": ", 1)[-1])


def _clip(text: str) -> str:
    """The first clause of a message, at most 90 characters."""
    first = re.split(r"(?<=[a-z'\)])\. |; ", text, maxsplit=1)[0]
    return first if len(first) <= 90 else first[:87] + "..."
