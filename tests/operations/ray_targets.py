"""Targets the Ray backend tests ship to workers: a module of its own, importable by name
(``tests.operations.ray_targets:slow_upper``) from a CLI driver in a subprocess and from
the Ray workers, whose ``PYTHONPATH`` names the repository."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from pydantic import BaseModel

from assay.models.resolve import LazyModel
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step


def upper(input: str) -> str:
    """The trivial target: what a code scorer compares with ``expected_output``."""
    return input.upper()


def slow_upper(input: str) -> str:
    """``upper`` after 50 ms, so a run lasts long enough to kill a process in its middle."""
    time.sleep(0.05)
    return input.upper()


def task_answer(prompt: str) -> str:
    """What the mock task model answers to ``What is A + B?``: the sum."""
    a, b = (int(n) for n in re.findall(r"\d+", prompt)[:2])
    return str(a + b)


class Verdict(BaseModel):
    score: float
    reason: str


def judge_reply(prompt: str) -> dict[str, Any]:
    """What the mock judge answers to a ``GRADE ANSWER<<x>>`` prompt: ``x`` as the score."""
    found = re.search(r"ANSWER<<(.*?)>>", prompt, re.S)
    if found is None:
        raise ValueError(f"not a grading prompt: {prompt[:80]!r}")
    return {"score": float(found.group(1)), "reason": f"judged {found.group(1)}"}


def _grade_prompt(ctx: Any) -> str:
    return f"GRADE ANSWER<<{ctx.output_text}>>"


def _verdict_score(ctx: Any) -> float:
    return float(ctx.preprocess_result.score)


def _verdict_reason(ctx: Any) -> str:
    return str(ctx.preprocess_result.reason)


def mock_judge(base_url: str) -> Scorer:
    """A judge scorer whose model is the loopback mock at ``base_url`` (a model string, as
    a config gives it: each worker builds its own HTTP client): the score is the number in
    the output it grades."""
    model = LazyModel("openai-compatible/judge", base_url=base_url)
    return (
        Scorer("judge", judge=JudgeConfig(model=model, instructions="You grade answers."))
        .preprocess(judge_step(_grade_prompt, Verdict))
        .score(_verdict_score)
        .reason(_verdict_reason)
    )


def exit_on_poison(input: str) -> str:
    """``upper``, except that the item ``poison`` ends the process scoring it at once (no
    exception, no cleanup: what a crash in native code or the OOM killer does)."""
    if input == "poison":
        os._exit(3)
    return input.upper()
