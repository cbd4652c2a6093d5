"""Shared pieces of the optimization tests: a small arithmetic task, a scripted task model
that only answers tersely when the system prompt asks for it, a scripted reflection model
that reads the scorer diagnostics and adds the matching rule, and a real SQLite store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.models.base import ChatMessage
from assay.scoring.registry import NoParams, register_scorer, unregister
from assay.scoring.scorer import Scorer
from assay.store import Store, open_store
from assay.testing import ScriptedModel

TERSE_RULE = "Respond with only the final number."


def arithmetic_rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"q{i}", "input": f"What is {i} + {i + 1}?", "expected_output": str(2 * i + 1)}
        for i in range(start, start + n)
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(path)


def task_reply(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """Terse only when the system message carries the rule; otherwise a sentence."""
    system = messages[0].content if messages[0].role == "system" else ""
    a, b = map(int, re.findall(r"\d+", messages[-1].content))
    if TERSE_RULE.lower() in system.lower():
        return str(a + b)
    return f"Let me think. The answer is {a + b}."


def reflection_reply(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """Adds the terse rule when the diagnostics show a failed exact match."""
    prompt = messages[-1].content
    current = prompt.split("```")[1].strip()
    if "Scorer diagnostics → " in prompt and "Exact match: 0.00" in prompt:
        return f"Here is the new instruction:\n```\n{current}\n{TERSE_RULE}\n```"
    return f"```\n{current}\nBe careful.\n```"


@pytest.fixture
def task_model() -> ScriptedModel:
    return ScriptedModel(responder=task_reply, name="task")


@pytest.fixture
def reflection_model() -> ScriptedModel:
    return ScriptedModel(responder=reflection_reply, name="reflect")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'assay.db'}") as opened:
        yield opened


@pytest.fixture
def data(tmp_path: Path) -> dict[str, str]:
    return {
        "train": write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(6)),
        "val": write_jsonl(tmp_path / "val.jsonl", arithmetic_rows(4, start=10)),
        "test": write_jsonl(tmp_path / "test.jsonl", arithmetic_rows(6, start=20)),
    }


@pytest.fixture
def base_config(data: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "arith",
        "candidate": {"instructions": "You solve arithmetic.", "style": "Be friendly."},
        "train": data["train"],
        "val": data["val"],
        "test": data["test"],
        "scorers": [{"type": "exact-match"}],
        "budget": {"max_metric_calls": 40},
        "task_model": "scripted/task",
        "reflection_model": "scripted/reflect",
        "run_dir": str(tmp_path / "gepa"),
    }


@pytest.fixture
def flaky_scorer() -> Iterator[str]:
    """A scorer type that raises on every item whose number is odd."""

    @register_scorer("opt-test-flaky", label="Flaky", description="raises on odd items")
    def build(params: NoParams) -> Scorer:
        def score(ctx: Any) -> float:
            if int(re.findall(r"\d+", ctx.input_text)[0]) % 2:
                raise RuntimeError("flaky scorer broke on this row")
            return 1.0 if str(ctx.output_text).strip().isdigit() else 0.0

        return Scorer("opt-test-flaky").score(score)

    yield "opt-test-flaky"
    unregister("opt-test-flaky")
