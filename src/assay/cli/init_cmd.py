"""``assay init``: a starter project (config, dataset, application stub, pytest test).

Every file it writes runs offline as written: ``assay run assay.yaml`` scores the stub
application with code scorers, ``pytest`` runs the test. Nothing existing is overwritten
unless ``--force``, and the files are written only once all of them can be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from assay.cli.common import CliError, console

CONFIG = """\
# assay run config: `assay run assay.yaml` (flags override these fields; see
# `assay run --help`). ${VAR} takes a value from the environment, ${VAR:-default} with a
# default, e.g. a judge's base_url: ${OPENAI_BASE_URL}.
name: starter
data: data.jsonl          # relative to this file
target: app:answer        # the application under test: module:function
scorers:
  - exact-match
  - type: keyword-coverage
    id: keywords
concurrency: 4
# threshold: 0.5          # pass level on each scorer's 0..1 scale
# limit: 2                # a smoke test: the first 2 items (or --limit 2)
"""

APP = '''\
"""The application under test: replace ``answer`` with a call to your model or agent."""

ANSWERS = {
    "capital of france": "Paris",
    "2 + 2": "4",
    "largest planet": "Jupiter",
}


def answer(question: str) -> str:
    """Return the application's answer to ``question``."""
    lowered = question.lower()
    return next((a for key, a in ANSWERS.items() if key in lowered), "I don't know")
'''

TEST = '''\
"""Evals as tests: `pytest test_app.py` (one test per dataset item, named by its id)."""

import pytest

from assay.testing import assert_score, cases

from app import answer


@pytest.mark.parametrize("case", cases("data.jsonl"))
def test_answer(case):
    assert_score(
        "keyword-coverage", output=answer(case.input), expected_output=case.expected_output, min=0.5
    )
'''

ROWS = [
    {"id": "capital", "input": "What is the capital of France?", "expected_output": "Paris"},
    {"id": "arithmetic", "input": "What is 2 + 2?", "expected_output": "4"},
    {"id": "planet", "input": "Which is the largest planet?", "expected_output": "Jupiter"},
]

FILES = {
    "assay.yaml": CONFIG,
    "data.jsonl": "".join(json.dumps(row) + "\n" for row in ROWS),
    "app.py": APP,
    "test_app.py": TEST,
}


def init(
    folder: Annotated[Path, typer.Argument(help="Where to write the files.")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write a starter run config, dataset, application stub and pytest test."""
    paths = {name: folder / name for name in FILES}
    taken = [str(path) for path in paths.values() if path.exists()]
    if taken and not force:
        raise CliError(f"{', '.join(taken)} already exist(s): pass --force to overwrite")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, path in paths.items():
            path.write_text(FILES[name], encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write to {folder}: {exc.strerror or exc}") from exc
    for path in paths.values():
        console.print(f"wrote {path}", markup=False, highlight=False)
    where = "" if folder == Path(".") else f"cd {folder} && "
    console.print(
        f"next: {where}assay run assay.yaml   (then `pytest test_app.py`, `assay serve`)",
        markup=False,
        highlight=False,
    )
