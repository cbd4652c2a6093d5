"""Noise sensitivity: does injected noise in the query change the response for the worse?

Parity with ``createNoiseSensitivityScorerLLM`` (reference §2.12). The run's output is the
response to a *noisy* query (the ``noisy_query`` param); the run's input supplies the
original query and ``baseline_response`` the response to it. The judge compares the two
responses on five dimensions (content accuracy, completeness, relevance, consistency,
hallucination resistance), rating each change from ``none`` to ``severe``, lists major
issues and gives a robustness score in [0, 1]. The score starts from that robustness
score; when it disagrees with the mean impact weight of the dimensions by more than
``discrepancy_threshold`` the lower of the two is used; then a capped penalty per major
issue is subtracted.

Judge calls: one (analyze), plus one for an ``llm`` reason.

Deviations from the reference
- A ``scale`` param (default 1) multiplies the final score before rounding, as in the other
  judge scorers; the reference has no scale. With the default the scores are identical.
- ``scoring`` options given partially (for example one impact weight) are merged over the
  defaults, as the reference does too.
- The reason prompt carries the score and the analysis only; it does not repeat the
  queries and responses.
- The analysis must rate each of the five dimensions exactly once (named by the five labels);
  otherwise it gets one repair turn and then fails the run (``status="error"``). The
  reference averages the impact of whatever dimensions came back, and with none uses the
  judge's robustness score alone.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field, field_validator

from assay.scorers._lib.formulas import capped_penalty
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Prompt,
    View,
    each_key_once,
    needs_input,
    needs_output,
)
from assay.scoring.registry import ScorerParams

INSTRUCTIONS = """\
You assess how robust an assistant is to noise: irrelevant, distracting or misleading
material added to a query. You compare the response to the clean query (the baseline) with
the response to the noisy query, and judge how the noise changed the response's accuracy,
completeness, relevance, consistency and resistance to hallucination. Changes that make the
noisy response worse count; harmless rewording does not."""

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


class NoiseSensitivityParams(ReasonedJudgeParams):
    baseline_response: str = Field(description="The response to the clean (noise-free) query.")
    noisy_query: str = Field(description="The query with noise injected.")
    noise_type: str | None = Field(
        default=None, description="A label for the kind of noise (e.g. 'misinformation')."
    )
    scoring: NoiseScoring = Field(
        default_factory=NoiseScoring,
        description="Impact weights, penalties and threshold; keys given are merged over the "
        "defaults.",
    )

    @field_validator("baseline_response", "noisy_query")
    @classmethod
    def _required(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(
                "Both baselineResponse and noisyQuery are required for Noise Sensitivity scoring"
            )
        return value


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


BOTH_REQUIRED = "Both original query and noisy response are required for evaluation"


class NoiseSensitivity(JudgeScorer[NoiseSensitivityParams]):
    """How robust the response is to noise injected into the query: the response to a noisy
    query is compared with a baseline response to the clean one."""

    type_id, label, params_model = "noise-sensitivity", "Noise Sensitivity", NoiseSensitivityParams
    reference = "createNoiseSensitivityScorerLLM (noise-sensitivity-scorer)"
    preview_notes = (
        "Requires the `baseline_response` and `noisy_query` params; the run's input is the "
        "original query and its output the response to the noisy query."
    )
    instructions = INSTRUCTIONS
    needs = (needs_input(BOTH_REQUIRED), needs_output(BOTH_REQUIRED))
    meaning = (
        "robustness to the noise; it combines the judge's robustness score with the impact on "
        "each dimension, minus a penalty per major issue"
    )
    analyze = Prompt(
        "Compare the baseline response with the noisy response on each dimension ("
        + ", ".join(DIMENSIONS)
        + "): rate the noise's impact, describe the specific changes and how the noise "
        "caused them. Then give an overall assessment, list any major issues (an empty "
        "list if none) and a robustness score from 0 to 1.",
        NoiseAnalysis,
        inputs={
            "original query": lambda j: j.input,
            "baseline response": lambda j: j.params.baseline_response,
            "noisy query": lambda j: j.params.noisy_query,
            "noisy response": lambda j: j.output,
            "noise type": lambda j: j.params.noise_type or None,
        },
        check=each_key_once(lambda j: DIMENSIONS, "dimensions", "dimension", "dimension"),
        description="Compare the baseline and noisy responses",
    )

    def score(self, j: View[NoiseSensitivityParams]) -> float:
        return noise_score(j.analysis, j.params.scoring)

    def reason(self, j: View[NoiseSensitivityParams]) -> str:
        analysis: NoiseAnalysis = j.analysis
        affected = [
            f"{d.dimension} ({d.impactLevel})"
            for d in analysis.dimensions
            if d.impactLevel != "none"
        ]
        text = (
            f"The score is {j.score} of {j.params.scale}; the judge's robustness score was "
            f"{analysis.robustnessScore}."
        )
        text += (
            " Dimensions affected by the noise: " + ", ".join(affected) + "."
            if affected
            else " No dimension was affected by the noise."
        )
        if analysis.majorIssues:
            text += " Major issues: " + "; ".join(analysis.majorIssues) + "."
        return text
