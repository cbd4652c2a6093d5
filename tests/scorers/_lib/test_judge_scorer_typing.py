"""mypy checks judge declarations: ``j.pre``/``j.analysis`` are the declared answer models.

``typing_cases/judge_declaration.py`` marks each line mypy must reject (``# error: code``);
this test runs ``mypy --strict`` on it and compares the reported lines and codes with the
marks, both ways, so a view that went back to ``Any`` (no errors) fails as surely as a
false alarm on a correct line does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

CASE = Path(__file__).parent / "typing_cases" / "judge_declaration.py"
ROOT = Path(__file__).parents[3]
MARK = re.compile(r"#\s*error:\s*([\w-]+)")
REPORTED = re.compile(r"^.+?:(\d+): error: .*\[([\w-]+)\]$")


def _marked() -> set[tuple[int, str]]:
    lines = CASE.read_text().splitlines()
    return {(n, m.group(1)) for n, line in enumerate(lines, 1) if (m := MARK.search(line))}


def test_mypy_rejects_exactly_the_marked_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))  # this tree's assay, as `mypy src` sees it
    marked = _marked()
    assert len(marked) == 4  # the case file is intact
    stdout, stderr, status = api.run(
        [
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            str(CASE),
        ]
    )
    reported = {
        (int(m.group(1)), m.group(2))
        for line in stdout.splitlines()
        if (m := REPORTED.match(line)) and CASE.name in line
    }
    assert status == 1, stdout + stderr
    assert reported == marked, stdout
