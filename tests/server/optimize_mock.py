"""A deterministic prompt optimization over real HTTP, for the server's tests: one mock
OpenAI-compatible server on loopback plays both the task model (``openai-compatible/task``:
terse only when the system prompt carries ``TERSE_RULE``) and the reflection model
(``openai-compatible/reflect``: appends the rule to the text it is shown), and code scorers
judge, so the seed scores 0 on validation and its first child 1."""

from __future__ import annotations

import re
from typing import Any

TERSE_RULE = "Respond with only the final number."
SEED = {"instructions": "You solve arithmetic.", "style": "Be friendly."}


def responder(body: dict[str, Any]) -> str:
    messages = body["messages"]
    if body["model"] == "reflect":
        current = str(messages[-1]["content"]).split("```")[1].strip()
        return f"Here is the new instruction:\n```\n{current}\n{TERSE_RULE}\n```"
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    a, b = map(int, re.findall(r"\d+", str(messages[-1]["content"])))
    if TERSE_RULE.lower() in str(system).lower():
        return str(a + b)
    return f"Let me think. The answer is {a + b}."


def rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"q{i}", "input": f"What is {i} + {i + 1}?", "expected_output": str(2 * i + 1)}
        for i in range(start, start + n)
    ]


def optimize_body(base_url: str, **changes: Any) -> dict[str, Any]:
    """A request body for ``POST /api/optimize`` with inline items and two code scorers."""
    body: dict[str, Any] = {
        "name": "arith",
        "candidate": dict(SEED),
        "train": {"data": rows(6)},
        "val": {"data": rows(4, start=10)},
        "test": {"data": rows(6, start=20)},
        "scorers": [{"type": "exact-match"}, {"type": "keyword-coverage"}],
        "budget": {"max_metric_calls": 40},
        "task_model": "openai-compatible/task",
        "task_base_url": base_url,
        "reflection_model": "openai-compatible/reflect",
        "reflection_base_url": base_url,
        "concurrency": 4,
    }
    body.update(changes)
    return body
