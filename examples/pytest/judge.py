"""A correctness judge: an LLM decides whether the bot's answer says what the reference says.

The judge model is ``$ASSAY_JUDGE_MODEL`` (default ``openai-compatible/judge``, reached at
``$ASSAY_BASE_URL``). ``conftest.py`` starts a loopback mock judge (``mock_verdict`` below)
when no URL is set, so the suite runs offline; point the variables at a real endpoint to
judge for real.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from pydantic import BaseModel

import assay


class Verdict(BaseModel):
    correct: bool
    reason: str


def _prompt(ctx: assay.StepContext) -> str:
    return (
        f"Question: {ctx.input_text}\n"
        f"Reference answer: {ctx.call.ground_truth}\n"
        f"Answer: {ctx.output_text}\n"
        "Does the answer say what the reference answer says?"
    )


JUDGE = assay.JudgeConfig(
    model=os.environ.get("ASSAY_JUDGE_MODEL", "openai-compatible/judge"),
    instructions="You check a support bot's answers against reference answers.",
    settings=assay.ModelSettings(temperature=0.0),  # deterministic calls are cached
)

correctness = (
    assay.Scorer(
        "correctness", description="1 when the judge finds the answer correct", judge=JUDGE
    )
    .analyze(assay.judge_step(_prompt, Verdict))
    .score(lambda ctx: 1.0 if ctx.analyze_result.correct else 0.0)
    .reason(lambda ctx: ctx.analyze_result.reason)
)


def mock_verdict(body: dict[str, Any]) -> dict[str, Any]:
    """The mock judge: correct when every word of the reference is in the answer."""
    prompt = body["messages"][-1]["content"]
    reference = re.search(r"Reference answer: (.*)", prompt)
    given = re.search(r"Answer: (.*)", prompt.split("Reference answer:")[-1])
    ref_words = set(re.findall(r"\w+", reference.group(1).lower())) if reference else set()
    answer_words = set(re.findall(r"\w+", given.group(1).lower())) if given else set()
    missing = sorted(ref_words - answer_words)
    reason = "says what the reference says" if not missing else f"misses {', '.join(missing)}"
    return {"correct": not missing, "reason": reason}


def mock_reply(body: dict[str, Any]) -> str:
    return json.dumps(mock_verdict(body))
