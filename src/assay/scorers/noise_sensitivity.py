"""Noise sensitivity: does injected noise in the query change the response for the worse?

Formula and deviations from the reference: docs/scorers.md, "noise-sensitivity"."""

from __future__ import annotations

from pydantic import Field, field_validator

from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Prompt,
    View,
    each_key_once,
    listed,
    needs_input,
    needs_output,
)
from assay.scorers._lib.noise_impact import (
    DIMENSIONS,
    NoiseAnalysis,
    NoiseScoring,
    affected,
    noise_score,
)
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You assess how robust an assistant is to noise: irrelevant, distracting or misleading
material added to a query. You compare the response to the clean query (the baseline) with
the response to the noisy query, and judge how the noise changed the response's accuracy,
completeness, relevance, consistency and resistance to hallucination. Changes that make the
noisy response worse count; harmless rewording does not."""


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


BOTH_REQUIRED = "Both original query and noisy response are required for evaluation"


NoiseSensitivityView = View[NoiseSensitivityParams, None, NoiseAnalysis]
"""What NoiseSensitivity's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "noise-sensitivity",
    label="Noise Sensitivity",
    params=NoiseSensitivityParams,
    reference="createNoiseSensitivityScorerLLM (noise-sensitivity-scorer)",
    preview_notes=(
        "Requires the `baseline_response` and `noisy_query` params; the run's input is the "
        "original query and its output the response to the noisy query."
    ),
)
class NoiseSensitivity(JudgeScorer[NoiseSensitivityParams, None, NoiseAnalysis]):
    """How robust the response is to noise injected into the query: the response to a noisy
    query is compared with a baseline response to the clean one."""

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

    def score(self, j: NoiseSensitivityView) -> float:
        return noise_score(j.analysis, j.params.scoring)

    def reason(self, j: NoiseSensitivityView) -> str:
        analysis: NoiseAnalysis = j.analysis
        text = f"{j.headline}; the judge's robustness score was {analysis.robustnessScore}."
        none = " No dimension was affected by the noise."
        text += listed("Dimensions affected by the noise", affected(analysis), ", ") or none
        return text + listed("Major issues", analysis.majorIssues)
