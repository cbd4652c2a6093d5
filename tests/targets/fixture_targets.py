"""Importable targets for the resolution tests (``tests.targets.fixture_targets:...``)."""

from __future__ import annotations

from typing import Any

import assay


def upper(text: str) -> str:
    return text.upper()


async def async_upper(text: str) -> str:
    return text.upper()


def with_expected(question: str, expected_output: Any, metadata: dict[str, Any]) -> str:
    return f"{question}|{expected_output}|{metadata.get('tag')}"


class EchoAgent:
    async def generate(self, input: Any) -> dict[str, Any]:
        return {"text": f"agent:{input}"}


class EchoWorkflow:
    async def run(self, input: Any) -> str:
        return f"workflow:{input}"


agent = EchoAgent()
workflow = EchoWorkflow()
length_scorer = assay.Scorer("length").score(lambda ctx: min(1.0, len(ctx.output_text) / 10))


def always_fails(text: str) -> str:
    raise RuntimeError(f"the service is down ({text})")


def fails_on_odd(text: str) -> str:
    if int(text.lstrip("q")) % 2:
        raise RuntimeError("odd item")
    return text.upper()


def answer_object(question: str) -> dict[str, Any]:
    """An application's answer object: the text to score sits under ``answer``; it reports
    its own token usage and cost next to it."""
    return {
        "answer": question.upper(),
        "trace": {"steps": [{"tool": "search"}]},
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        "cost_usd": 0.25,
    }


def choices_object(question: str) -> dict[str, Any]:
    return {"choices": [{"text": f"first:{question}"}, {"text": "second"}]}


def first_choice_text(value: dict[str, Any]) -> str:
    return str(value["choices"][0]["text"])
