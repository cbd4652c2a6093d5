"""Which two texts a text code scorer compares.

The reference code scorers compare the joined *input* messages with the joined *output*
messages (``", "`` between messages) and ignore ground truth. That made an exactly right
answer score content-similarity 0.0 next to exact-match 1.0 on any dataset with expected
answers, so assay's default is ``compare_to="auto"``: the expected output when the item has
one, the input otherwise (which is exactly the reference's behaviour on its own test runs,
since they carry no ground truth). ``"input"`` and ``"ground_truth"`` force one side.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from assay.messages.chat import input_texts, output_texts
from assay.scoring.context import NotScorable, StepContext, not_scorable

CompareTo = Literal["auto", "input", "ground_truth"]

COMPARE_TO_DESCRIPTION = (
    "What the output is compared with: 'auto' (the expected output when the item has one, "
    "else the input), 'input' (always the joined input messages, the reference's behaviour) "
    "or 'ground_truth' (always the expected output; not scorable without one)."
)


def resolved_side(ctx: StepContext, compare_to: CompareTo) -> Literal["input", "ground_truth"]:
    """Which side ``compare_to`` means for this call (``auto`` decided by the ground truth)."""
    if compare_to == "auto":
        return "input" if ctx.call.ground_truth is None else "ground_truth"
    return compare_to


def joined_output(ctx: StepContext) -> str:
    return ", ".join(output_texts(ctx.call.output))


def _ground_truth_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return ", ".join(output_texts(value))
    except ValueError:
        return json.dumps(value, ensure_ascii=False, default=str)


def text_pair(ctx: StepContext, compare_to: CompareTo) -> tuple[str, str] | NotScorable:
    """``(reference_text, output_text)``, or not-scorable when the ground truth is missing."""
    if resolved_side(ctx, compare_to) == "ground_truth":
        if ctx.call.ground_truth is None:
            return not_scorable("no ground truth to compare with (compare_to='ground_truth')")
        reference = _ground_truth_text(ctx.call.ground_truth)
    else:
        reference = ", ".join(input_texts(ctx.call.input))
    return reference, joined_output(ctx)
