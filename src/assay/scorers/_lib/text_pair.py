"""Which two texts a text code scorer compares.

The reference code scorers compare the joined *input* messages with the joined *output*
messages (``", "`` between messages) and ignore ground truth. assay keeps that as the
default (``compare_to="input"``) for parity and adds ``compare_to="ground_truth"``: compare
the output with the expected answer, which is what most evaluation datasets need.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from assay.messages.chat import input_texts, output_texts
from assay.scoring.context import NotScorable, StepContext, not_scorable

CompareTo = Literal["input", "ground_truth"]

COMPARE_TO_DESCRIPTION = (
    "What the output is compared with: 'input' (the reference behaviour: the joined input "
    "messages) or 'ground_truth' (the expected output)."
)


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
    if compare_to == "ground_truth":
        if ctx.call.ground_truth is None:
            return not_scorable("no ground truth to compare with (compare_to='ground_truth')")
        reference = _ground_truth_text(ctx.call.ground_truth)
    else:
        reference = ", ".join(input_texts(ctx.call.input))
    return reference, joined_output(ctx)
