"""``assay.scorers`` as the public place to declare a scorer: every exported name is the
object its private ``_lib`` module defines, the documented one-line import works in a fresh
interpreter, and the names load on first use (the registry imports this package for its
placeholders and must not pay for the judge framework)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import assay
import assay.scorers

SRC = Path(assay.__file__).resolve().parents[1]
DOCS = SRC.parent / "docs" / "judge-scorers.md"


def python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC)},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_every_exported_name_is_the_defining_modules_object() -> None:
    names = set(assay.scorers.__all__) - {"BUILTIN_SCORERS", "BUILTIN_ALIASES"}
    assert names == {"register_scorer", *assay.scorers._PUBLIC}  # the list and the table agree
    assert {"JudgeScorer", "Prompt", "View", "register_scorer"} <= names
    for name in sorted(names):
        value = getattr(assay.scorers, name)
        home = importlib.import_module(value.__module__)
        assert getattr(home, name) is value, name
    assert assay.scorers.register_scorer is assay.register_scorer


def test_the_documented_import_line_is_in_the_docs_and_works() -> None:
    line = "from assay.scorers import JudgeScorer, Prompt, View, register_scorer"
    assert line in DOCS.read_text(encoding="utf-8")
    out = python(f"{line}\nprint(JudgeScorer.__module__, Prompt.__name__, View.__name__)")
    assert out == "assay.scorers._lib.judge_scorer Prompt View"


def test_importing_the_package_loads_no_part_of_the_declaration_kit() -> None:
    out = python(
        "import sys, assay.scorers\n"
        "from assay.scoring.registry import SCORER_TYPES\n"
        "SCORER_TYPES.names()\n"
        "print(sorted(m for m in sys.modules if m.startswith('assay.scorers._lib')))"
    )
    assert out == "[]"


def test_import_assay_does_not_import_the_scorers_package() -> None:
    assert python("import sys, assay\nprint('assay.scorers' in sys.modules)") == "False"


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import() -> None:
    with pytest.raises(AttributeError, match=r"assay\.scorers.*JudgeScorr"):
        _ = assay.scorers.JudgeScorr
    with pytest.raises(ImportError):
        exec("from assay.scorers import NoSuchThing", {})
    from assay.scorers import exact_match  # a scorer module, not a public name

    assert exact_match.__name__ == "assay.scorers.exact_match"
