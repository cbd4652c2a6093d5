"""Keyword coverage: share of the reference text's keywords that the output contains.

Parity with ``createKeywordCoverageScorer``: keywords come from npm ``keyword-extractor``
(SMART stop list, digits dropped, lowercased, de-duplicated); an empty keyword set on the
reference side scores 1. Unrounded.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.keywords import extract
from assay.scorers._lib.text_pair import COMPARE_TO_DESCRIPTION, CompareTo, text_pair
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class KeywordCoverageParams(ScorerParams):
    compare_to: CompareTo = Field(default="auto", description=COMPARE_TO_DESCRIPTION)


@register_scorer(
    "keyword-coverage",
    label="Keyword Coverage",
    description=(
        "Fraction of the input's (or expected output's) keywords that appear in the output, "
        "after stop-word removal."
    ),
    params=KeywordCoverageParams,
    reference="createKeywordCoverageScorer (keyword-coverage-scorer)",
    preview_notes="No keywords on the reference side scores 1.",
)
def build(params: KeywordCoverageParams) -> Scorer:
    def preprocess(ctx: StepContext) -> Any:
        pair = text_pair(ctx, params.compare_to)
        if not isinstance(pair, tuple):
            return pair
        reference, response = pair
        if not reference and not response:
            return {"referenceKeywords": [], "responseKeywords": []}
        return {"referenceKeywords": extract(reference), "responseKeywords": extract(response)}

    def analyze(ctx: StepContext) -> dict[str, Any]:
        data = ctx.preprocess_result
        reference = data["referenceKeywords"]
        response = set(data["responseKeywords"])
        matched = [k for k in reference if k in response]
        return {
            "totalKeywordsLength": len(reference),
            "matchedKeywordsLength": len(matched),
            "matchedKeywords": matched,
            "missingKeywords": [k for k in reference if k not in response],
        }

    def score(ctx: StepContext) -> float:
        data = ctx.analyze_result
        total = data["totalKeywordsLength"]
        return 1.0 if total == 0 else data["matchedKeywordsLength"] / total

    return (
        Scorer("keyword-coverage", description="Keyword coverage")
        .preprocess(preprocess)
        .analyze(analyze)
        .score(score)
    )
