"""``assay.scorers.BUILTIN_SCORERS``: the placeholders agree with what the modules register,
and looking one scorer up imports its module alone."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import assay
import assay.scorers
from assay.scorers import BUILTIN_ALIASES, BUILTIN_SCORERS
from assay.scoring.registry import SCORER_TYPES

SRC = Path(assay.__file__).resolve().parents[1]


def python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC)},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_public_module_is_in_the_catalogue_and_nothing_else() -> None:
    modules = {
        info.name
        for info in pkgutil.iter_modules(assay.scorers.__path__)
        if not info.name.startswith("_")
    }
    assert set(BUILTIN_SCORERS.values()) == modules


def test_each_module_registers_exactly_its_catalogue_entries() -> None:
    for name in sorted(set(BUILTIN_SCORERS.values())):
        importlib.import_module(f"assay.scorers.{name}")
    registered = {type_id: SCORER_TYPES.get(type_id) for type_id in SCORER_TYPES.names()}
    builtins = {
        type_id: scorer_type
        for type_id, scorer_type in registered.items()
        if SCORER_TYPES.origin(type_id) == "built-in"
    }
    assert sorted(builtins) == sorted(BUILTIN_SCORERS)
    for type_id, scorer_type in builtins.items():
        assert scorer_type.aliases == BUILTIN_ALIASES.get(type_id, ()), type_id
        assert not SCORER_TYPES.is_lazy(type_id)


def test_creating_one_scorer_imports_its_module_alone() -> None:
    out = python(
        "import json, sys, assay\n"
        "assay.create_scorer('exact-match')\n"
        "assay.get_scorer_type('checks.includes')\n"
        "names = assay.scoring.registry.SCORER_TYPES.names()\n"
        "mods = sorted(m for m in sys.modules if m.startswith('assay.scorers.')"
        " and not m.startswith('assay.scorers._lib'))\n"
        "print(json.dumps([mods, len(names)]))"
    )
    modules, count = json.loads(out)
    assert modules == ["assay.scorers.checks", "assay.scorers.exact_match"]
    assert count == len(BUILTIN_SCORERS)


def test_listing_scorers_imports_them_all_and_reports_the_extra() -> None:
    infos = {info.type: info for info in assay.list_scorers()}
    assert set(BUILTIN_SCORERS) <= set(infos)
    assert infos["completeness"].extra == "nlp"
    assert {t for t, info in infos.items() if info.extra is not None} == {"completeness"}
