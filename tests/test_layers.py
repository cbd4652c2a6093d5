"""Imports point inward: no room of ``src/assay`` imports a room above it.

The map (see docs/architecture.md) is ``LAYERS`` below: a room may import rooms of lower
layers, never a room of its own layer or a higher one. On top of the layers: ``scoring``
sees only the ``Model`` protocol of ``models`` (``assay.models.base``), and a built-in scorer
module never imports another (shared code lives in ``scorers/_lib``). The calibration room
spans two layers: ``calibration.run`` (it runs through ``operations``) sits above the rest
of the room, which ``operations`` uses. Every import counts,
also those inside functions and under ``TYPE_CHECKING``: a lazy import is still a dependency.
A module in no known room fails the test, so a new room has to be placed on the map.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"

LAYERS: list[set[str]] = [
    {
        "types",
        "rounding",
        "fingerprint",
        "registry",
        "extras",
        "config_file",
        "patterns",
        "warm_imports",
    },  # import nothing of ours
    {"messages", "summary", "models", "datasets"},
    {"scoring"},
    {"scorers._lib"},
    {"scorers", "targets"},
    {"tasks"},
    {"runner"},
    {"store", "analysis"},
    {"calibration"},  # judge calibration: config, data, statistics, certificates, report
    {"operations", "live"},
    {"calibration.run"},  # runs a calibration as a stored run, through operations
    {"optimize", "testing"},
    {"server"},
    {"cli"},
    {"assay", "__main__"},  # the package root: the public names, the composition root
]
LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}

SCORING_MAY_USE_FROM_MODELS = {"assay.models.base"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "assay":
        raise ValueError(f"{module} is not ours")
    if len(parts) == 1:
        return "assay"
    if parts[1] == "scorers" and len(parts) > 2 and parts[2] == "_lib":
        return "scorers._lib"
    if parts[1] == "calibration" and len(parts) > 2 and parts[2] == "run":
        return "calibration.run"
    return parts[1]


def is_module(name: str) -> bool:
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every ``assay`` module ``path`` imports (anywhere in it), with its line."""
    source = path.read_text(encoding="utf-8")
    return imports_in(source, module_name(path), is_package=path.name == "__init__.py")


def imports_in(source: str, module: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """Every ``assay`` module the code of ``module`` imports, with its line."""
    tree = ast.parse(source)
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if is_module(full) else base))
    return [(line, name) for line, name in found if name.split(".")[0] == "assay"]


def problem(importer: str, imported: str) -> str | None:
    """Why ``importer`` may not import ``imported``, or ``None``."""
    a, b = room_of(importer), room_of(imported)
    if a not in LEVEL or b not in LEVEL:
        missing = a if a not in LEVEL else b
        return f"room {missing!r} is not on the map (tests/test_layers.py, docs/architecture.md)"
    if a == b:
        if a == "scorers" and importer != "assay.scorers" and imported != "assay.scorers":
            return "a built-in scorer imports another scorer (share code through scorers/_lib)"
        return None
    if LEVEL[a] <= LEVEL[b]:
        where = "its own layer" if LEVEL[a] == LEVEL[b] else "a higher layer"
        return f"{a} may not import {b} ({where})"
    if a == "scoring" and b == "models" and imported not in SCORING_MAY_USE_FROM_MODELS:
        return "scoring sees only the Model protocol (assay.models.base)"
    return None


def violations() -> list[str]:
    found = []
    for path in sorted((SRC / "assay").rglob("*.py")):
        importer = module_name(path)
        for line, imported in imports_of(path):
            why = problem(importer, imported)
            if why is not None:
                rel = path.relative_to(SRC.parent)
                found.append(f"{rel}:{line}: {importer} -> {imported}: {why}")
    return found


def test_imports_point_inward() -> None:
    assert violations() == []


def test_every_module_is_in_a_room_on_the_map() -> None:
    rooms = {room_of(module_name(p)) for p in (SRC / "assay").rglob("*.py")}
    assert rooms <= set(LEVEL), sorted(rooms - set(LEVEL))


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("assay.types", "assay.rounding"),  # the foundation imports nothing of ours
        ("assay.registry", "assay.types"),
        ("assay.runner.result", "assay.analysis.report_terminal"),
        ("assay.runner.api", "assay.store"),
        ("assay.scoring.judge", "assay.models.resolve"),
        ("assay.scoring.judge", "assay.scorers.faithfulness"),
        ("assay.scorers.bias", "assay.scorers.toxicity"),
        ("assay.scorers._lib.claims", "assay.scorers.faithfulness"),
        ("assay.models.base", "assay.scoring.scorer"),
        ("assay.store.sink", "assay.analysis.compare"),  # same layer
        ("assay.operations.reports", "assay.cli.common"),
        ("assay.cli.app", "assay"),
        ("assay.analysis.compare", "assay.testing.scripted"),
        ("assay.runner.api", "assay.nowhere.thing"),
        ("assay.analysis.report_html", "assay.calibration.report"),
        ("assay.calibration.certificates", "assay.operations.stored_runs"),
        ("assay.operations.reports", "assay.calibration.run"),
        ("assay.calibration.gates", "assay.calibration.run"),  # the room's run sits above it
        ("assay.config_file", "assay.calibration.config"),
    ],
)
def test_the_rules_catch_upward_imports(importer: str, imported: str) -> None:
    assert problem(importer, imported) is not None


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("assay.scoring.judge", "assay.models.base"),
        ("assay.scorers.bias", "assay.scorers._lib.judge_common"),
        ("assay.scorers._lib.judge_common", "assay.models.resolve"),
        ("assay.scorers", "assay.scorers.bias"),
        ("assay.runner.engine", "assay.summary.accumulator"),
        ("assay.store.sink", "assay.runner.sink"),
        ("assay.operations.stored_runs", "assay.store"),
        ("assay.cli.runs", "assay.operations.stored_runs"),
        ("assay", "assay.operations.stored_runs"),
        ("assay.calibration.run", "assay.operations.stored_runs"),
        ("assay.operations.reports", "assay.calibration.certificates"),
        ("assay.optimize.judge", "assay.calibration.run"),
        ("assay.calibration.run", "assay.calibration.gates"),
        ("assay.optimize.judge_config", "assay.config_file"),
    ],
)
def test_the_rules_allow_inward_imports(importer: str, imported: str) -> None:
    assert problem(importer, imported) is None


def test_lazy_relative_and_type_checking_imports_count() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from assay.store import Store\n"
        "def f():\n"
        "    from ..analysis import report_terminal\n"
        "    import assay.targets.base\n"
    )
    found = [name for _, name in imports_in(source, "assay.runner.result")]
    assert found == ["assay.store", "assay.analysis.report_terminal", "assay.targets.base"]
    assert [problem("assay.runner.result", name) is None for name in found] == [
        False,
        False,
        True,
    ]


def test_the_pytest_plugin_reaches_only_into_testing() -> None:
    """``src/assay_pytest.py`` sits outside the package (pytest loads it into every suite):
    whatever it needs of assay it imports lazily, and only from ``assay.testing``."""
    source = (SRC / "assay_pytest.py").read_text(encoding="utf-8")
    found = [name for _, name in imports_in(source, "assay_pytest")]
    assert found and all(name.startswith("assay.testing") for name in found), found
