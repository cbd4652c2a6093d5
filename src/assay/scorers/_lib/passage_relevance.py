"""Context relevance's shapes: the penalty rates, the judge's evaluation of each passage
(relevance level, used or not), the relevance weights and the reference formula.

Kept apart from ``context_relevance`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import capped_penalty
from assay.scoring.registry import ScorerParams

NO_CONTEXT_PLACEHOLDER = "[No context was provided for evaluation]"
RELEVANCE_WEIGHTS: dict[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


class ContextRelevancePenalties(ScorerParams):
    unused_high_relevance_context: float = Field(
        default=0.1, ge=0.0, description="Penalty per highly relevant passage left unused."
    )
    missing_context_per_item: float = Field(
        default=0.15, ge=0.0, description="Penalty per piece of missing information."
    )
    max_missing_context_penalty: float = Field(
        default=0.5, ge=0.0, description="Cap on the total missing-information penalty."
    )


class ContextEvaluation(BaseModel):
    context_index: int = Field(description="Index of the passage, as numbered in the prompt.")
    contextPiece: str = Field(description="The passage, or its first words to identify it.")
    relevanceLevel: Literal["high", "medium", "low", "none"] = Field(
        description="Relevance of the passage to the question."
    )
    wasUsed: bool = Field(description="Whether the response used information from the passage.")
    reasoning: str = Field(description="One sentence explaining the rating.")


class ContextRelevanceAnalysis(BaseModel):
    evaluations: list[ContextEvaluation] = Field(description="One evaluation per passage.")
    missingContext: list[str] = Field(
        default_factory=list,
        description="Information the question needed that no passage provided.",
    )
    overallAssessment: str = Field(description="One or two sentences on the context overall.")

    def unused_relevant(self) -> list[ContextEvaluation]:
        """The highly relevant passages the response did not use."""
        return [e for e in self.evaluations if e.relevanceLevel == "high" and not e.wasUsed]

    def unused_indices(self) -> list[str]:
        return [str(e.context_index) for e in self.unused_relevant()]

    def levels(self) -> str:
        """``2 high, 1 none``: how many passages had each relevance level (zeros left out)."""
        counts = {
            level: sum(e.relevanceLevel == level for e in self.evaluations)
            for level in RELEVANCE_WEIGHTS
        }
        return ", ".join(f"{n} {level}" for level, n in counts.items() if n)


def no_context_reason(score: float | None) -> str:
    """The reference's fixed explanation for a run without context."""
    return (
        "No context was available for evaluation. The agent response was generated without "
        f"any supporting context. Score: {score}"
    )


def relevance_score(
    analysis: ContextRelevanceAnalysis, penalties: ContextRelevancePenalties
) -> float:
    """The reference formula, unscaled: mean relevance weight minus the unused-passage and
    (capped) missing-information penalties, at least 0."""
    evaluations = analysis.evaluations
    base = sum(RELEVANCE_WEIGHTS[e.relevanceLevel] for e in evaluations) / len(evaluations)
    unused = len(analysis.unused_relevant())
    missing = capped_penalty(
        len(analysis.missingContext),
        penalties.missing_context_per_item,
        penalties.max_missing_context_penalty,
    )
    return max(0.0, base - unused * penalties.unused_high_relevance_context - missing)
