"""A real SQLite store with stored runs for the page tests: repeats, a target error, a
judge scorer (scripted model) with prompts and raw answers, and user text with HTML."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.testclient import TestClient

from assay import JudgeConfig, Scorer, ScriptedModel, judge_step
from assay.operations.stored_runs import run_stored
from assay.scoring.registry import create_scorer
from assay.server.ui import STATIC_DIR, router
from assay.store import Store, open_store

SCRIPT_OUTPUT = "<script>alert('pwned')</script> the capital is Paris"

ITEMS: list[dict[str, Any]] = [
    {"id": "q1", "input": "Capital of France?", "expected_output": "Paris"},
    {"id": "q2", "input": "Capital of Spain?", "expected_output": "Madrid"},
    {"id": "boom", "input": "explode", "expected_output": "nothing"},
]


def answer_well(question: str) -> str:
    if question == "explode":
        raise RuntimeError("target blew up on purpose")
    return SCRIPT_OUTPUT if "France" in question else "Madrid, of course"


def answer_badly(question: str) -> str:
    if question == "explode":
        return "nothing"
    return "I do not know" if "France" in question else "Madrid, of course"


def _judge() -> Scorer:
    model = ScriptedModel(
        name="scripted-judge", responder=lambda messages, schema: '{"score": 0.5}'
    )
    return Scorer("judge-half", judge=JudgeConfig(model=model, instructions="Judge.")).score(
        judge_step(lambda ctx: f"JUDGE PROMPT for {ctx.output_text}")
    )


def _includes(expected: str) -> Scorer:
    return create_scorer({"type": "check-includes", "params": {"expected": expected}})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "ui.db")) as db:
        yield db


@pytest.fixture
def runs(store: Store) -> dict[str, str]:
    """Two stored runs over the same items: ``good`` (2 repeats, a judge) and ``bad``."""
    good = run_stored(
        ITEMS, answer_well, [_includes("Paris"), _judge()], store=store, repeats=2, name="good"
    )
    bad = run_stored(ITEMS, answer_badly, [_includes("Paris"), _judge()], store=store, name="bad")
    return {"good": good.id, "bad": bad.id}


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    app = FastAPI()
    app.state.store = store
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    with TestClient(app) as test_client:
        yield test_client
