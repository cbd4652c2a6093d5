"""The README's Python examples run as written, and its two commands are what CI runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # run where the examples expect to be: a checkout with examples/, a fresh .assay store
    shutil.copytree(Path(__file__).parents[1] / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    runnable = [b for b in blocks if "await " not in b]  # the async sketch needs a live model
    assert len(runnable) >= 2
    for _ in range(2):  # twice in a row: a second run of the examples must work too
        for block in runnable:
            exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / ".assay" / "assay.db").exists() and (tmp_path / "report.html").exists()


def test_readme_opens_with_the_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first_block is not None
    lines = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2
    assert lines[0].endswith("assay demo") and lines[1].endswith("pytest")
    assert all(line.startswith("python3 -m venv .venv") for line in lines)
