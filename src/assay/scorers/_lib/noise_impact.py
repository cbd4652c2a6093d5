"""Noise sensitivity's shapes: the five dimensions and impact levels the judge rates, the
``scoring`` options (impact weights, penalties, threshold) and the reference formula.

Kept apart from ``noise_sensitivity`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import capped_penalty
from assay.scoring.registry import ScorerParams

Dimension = Literal[
    "content_accuracy",
    "completeness",
    "relevance",
    "consistency",
    "hallucination_resistance",
]
DIMENSIONS: tuple[str, ...] = get_args(Dimension)

ImpactLevel = Literal["none", "minimal", "moderate", "significant", "severe"]


class ImpactWeights(ScorerParams):
    none: float = Field(default=1.0, ge=0.0, le=1.0, description="Weight of no impact.")
    minimal: float = Field(default=0.85, ge=0.0, le=1.0, description="Weight of minimal impact.")
    moderate: float = Field(default=0.6, ge=0.0, le=1.0, description="Weight of moderate impact.")
    significant: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Weight of significant impact."
    )
    severe: float = Field(default=0.1, ge=0.0, le=1.0, description="Weight of severe impact.")


class NoisePenalties(ScorerParams):
    major_issue_per_item: float = Field(
        default=0.1, ge=0.0, description="Penalty per major issue the judge lists."
    )
    max_major_issue_penalty: float = Field(
        default=0.3, ge=0.0, description="Cap on the total major-issue penalty."
    )


class NoiseScoring(ScorerParams):
    impact_weights: ImpactWeights = Field(default_factory=ImpactWeights)
    penalties: NoisePenalties = Field(default_factory=NoisePenalties)
    discrepancy_threshold: float = Field(
        default=0.2,
        ge=0.0,
        description="When the judge's robustness score and the mean impact weight differ by "
        "more than this, the lower one is used.",
    )


class DimensionAnalysis(BaseModel):
    dimension: Dimension = Field(description="One of: " + ", ".join(DIMENSIONS) + ".")
    impactLevel: ImpactLevel = Field(description="How much the noise changed this dimension.")
    specificChanges: str = Field(description="What changed between the two responses.")
    noiseInfluence: str = Field(description="How the noise caused the change, if it did.")


class NoiseAnalysis(BaseModel):
    dimensions: list[DimensionAnalysis] = Field(description="One entry per dimension.")
    overallAssessment: str = Field(description="One or two sentences on the robustness.")
    majorIssues: list[str] = Field(
        default_factory=list, description="Serious problems the noise caused (may be empty)."
    )
    robustnessScore: float = Field(
        ge=0.0, le=1.0, description="Overall robustness: 1 = unaffected, 0 = derailed."
    )


def noise_score(analysis: NoiseAnalysis, scoring: NoiseScoring) -> float:
    """The reference formula, unscaled and unrounded."""
    value = max(0.0, min(1.0, analysis.robustnessScore))
    if analysis.dimensions:
        weights = scoring.impact_weights
        calculated = sum(getattr(weights, d.impactLevel) for d in analysis.dimensions) / len(
            analysis.dimensions
        )
        if abs(value - calculated) > scoring.discrepancy_threshold:
            value = min(value, calculated)
    penalties = scoring.penalties
    count = len(analysis.majorIssues)
    penalty = capped_penalty(
        count, penalties.major_issue_per_item, penalties.max_major_issue_penalty
    )
    return max(0.0, value - penalty)


def affected(analysis: NoiseAnalysis) -> list[str]:
    """``dimension (impact)`` of every dimension the noise changed, for the reason."""
    return [
        f"{d.dimension} ({d.impactLevel})" for d in analysis.dimensions if d.impactLevel != "none"
    ]
