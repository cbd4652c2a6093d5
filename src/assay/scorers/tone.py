"""Tone consistency: sentiment stability of the output, or closeness to a reference tone.

Parity with ``createToneScorer``: AFINN-165 sentiment as npm ``sentiment@5.0.2`` computes
it. Without ``reference_tone`` the score is ``1 − variance`` of per-sentence sentiment; with
it, ``1 − |comparative(output) − comparative(reference_tone)|``. Only the output is read.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.sentiment import tone_scores
from assay.scorers._lib.text_pair import joined_output
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class ToneParams(ScorerParams):
    reference_tone: str | None = Field(
        default=None,
        description="A reference text whose sentiment the output should match; "
        "if unset, the score measures how stable the output's sentiment is across sentences.",
    )


@register_scorer(
    "tone",
    label="Tone Consistency",
    description=(
        "Sentiment consistency of the output across its sentences, or its closeness to the "
        "sentiment of a reference text (AFINN-165 lexicon)."
    ),
    params=ToneParams,
    reference="createToneScorer (tone-scorer)",
    aliases=("tone-consistency",),
    preview_notes="Reads the output only; text after the last . ! ? is ignored in stability mode.",
)
def build(params: ToneParams) -> Scorer:
    def preprocess(ctx: StepContext) -> dict[str, Any]:
        return tone_scores(joined_output(ctx), params.reference_tone)

    return (
        Scorer("tone", description="Tone consistency")
        .preprocess(preprocess)
        .score(lambda ctx: ctx.preprocess_result["score"])
    )
