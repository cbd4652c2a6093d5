"""Textual difference: LCS similarity ratio between the reference text and the output.

Parity with ``createTextualDifferenceScorer``: ``ratio = 2·LCS / (len(a) + len(b))`` over
UTF-16 code units, plus word ``changes``, ``lengthDiff`` and ``confidence`` in the step
result. Case- and whitespace-sensitive; unrounded. The LCS is bit-parallel (``_lib.lcs``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.text_pair import COMPARE_TO_DESCRIPTION, CompareTo, text_pair
from assay.scorers._lib.textdiff import text_difference
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class TextualDifferenceParams(ScorerParams):
    compare_to: CompareTo = Field(default="auto", description=COMPARE_TO_DESCRIPTION)


@register_scorer(
    "textual-difference",
    label="Textual Difference",
    description=(
        "Character-level similarity ratio (longest common subsequence) between the output and "
        "the input (or the expected output), with word-change counts."
    ),
    params=TextualDifferenceParams,
    reference="createTextualDifferenceScorer (textual-difference-scorer)",
    preview_notes="Case- and whitespace-sensitive.",
)
def build(params: TextualDifferenceParams) -> Scorer:
    def preprocess(ctx: StepContext) -> Any:
        pair = text_pair(ctx, params.compare_to)
        if not isinstance(pair, tuple):
            return pair
        diff = text_difference(*pair)
        return {
            "ratio": diff.ratio,
            "confidence": diff.confidence,
            "changes": diff.changes,
            "lengthDiff": diff.length_diff,
        }

    return (
        Scorer("textual-difference", description="Textual difference (LCS ratio)")
        .preprocess(preprocess)
        .score(lambda ctx: ctx.preprocess_result["ratio"])
    )
