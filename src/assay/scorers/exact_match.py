"""Exact match: 1 when the output text equals the expected output, else 0.

The classic metric of QA and classification benchmarks (lm-evaluation-harness's
``exact_match``) as a scorer: the run maps the item's ``expected_output`` to
``ground_truth``. It is also the runner benchmark's scorer because it is the cheapest
honest scorer there is, so any overhead measured is the runner's.
"""

from __future__ import annotations

import re
import string
from typing import Any

from pydantic import Field

from assay.messages.chat import output_texts
from assay.scoring.context import StepContext, not_scorable
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer

_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")


class ExactMatchParams(ScorerParams):
    ignore_case: bool = Field(default=False, description="Compare case-insensitively.")
    ignore_punctuation: bool = Field(default=False, description="Drop ASCII punctuation first.")
    strip: bool = Field(default=True, description="Ignore leading and trailing whitespace.")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return " ".join(output_texts(value))


@register_scorer(
    "exact-match",
    label="Exact match",
    description="1 if the output equals the expected output (after the chosen normalisation).",
    params=ExactMatchParams,
    kind="code",
    reference="lm-evaluation-harness exact_match",
)
def build_exact_match(params: ExactMatchParams) -> Scorer:
    def normalise(text: str) -> str:
        if params.strip:
            text = text.strip()
        if params.ignore_case:
            text = text.lower()
        if params.ignore_punctuation:
            text = _PUNCT.sub("", text)
        return text

    def score(ctx: StepContext) -> Any:
        if ctx.call.ground_truth is None:
            return not_scorable("exact-match needs an expected output")
        same = normalise(_text(ctx.call.output)) == normalise(_text(ctx.call.ground_truth))
        return 1.0 if same else 0.0

    return Scorer("exact-match", description="output equals the expected output").score(score)
