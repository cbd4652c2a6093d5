"""Content similarity: Sørensen–Dice over character bigrams (npm ``string-similarity``).

Parity with the reference ``createContentSimilarityScorer``; unrounded score.
Deliberate deviation: the reference replaces its whole default options object when any
option is passed (``{ignoreCase: false}`` silently turns ``ignoreWhitespace`` off); assay
merges params over defaults. The score is unaffected in practice, because the Dice step
strips all whitespace anyway.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from assay.scorers._lib.dice import compare_two_strings
from assay.scorers._lib.text_pair import COMPARE_TO_DESCRIPTION, CompareTo, text_pair
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer

_WHITESPACE = re.compile(r"\s+")


class ContentSimilarityParams(ScorerParams):
    ignore_case: bool = Field(default=True, description="Lowercase both texts first.")
    ignore_whitespace: bool = Field(
        default=True, description="Collapse whitespace runs to one space and trim."
    )
    compare_to: CompareTo = Field(default="auto", description=COMPARE_TO_DESCRIPTION)


@register_scorer(
    "content-similarity",
    label="Content Similarity",
    description=(
        "Character-bigram Dice similarity between the output and the input (or the expected "
        "output): 1 for identical text, 0 for nothing in common."
    ),
    params=ContentSimilarityParams,
    reference="createContentSimilarityScorer (content-similarity-scorer)",
    preview_notes="Unrounded; whitespace is ignored by the similarity itself.",
)
def build(params: ContentSimilarityParams) -> Scorer:
    def preprocess(ctx: StepContext) -> Any:
        pair = text_pair(ctx, params.compare_to)
        if not isinstance(pair, tuple):
            return pair
        first, second = pair
        if params.ignore_case:
            first, second = first.lower(), second.lower()
        if params.ignore_whitespace:
            first = _WHITESPACE.sub(" ", first).strip()
            second = _WHITESPACE.sub(" ", second).strip()
        return {"processedInput": first, "processedOutput": second}

    def score(ctx: StepContext) -> float:
        data = ctx.preprocess_result
        return compare_two_strings(data["processedInput"], data["processedOutput"])

    return (
        Scorer("content-similarity-scorer", description="Content similarity (bigram Dice)")
        .preprocess(preprocess)
        .score(score)
    )
