"""Answer similarity: how closely the response matches the ground-truth answer in meaning.

Formula and deviations from the reference: docs/scorers.md, "answer-similarity"."""

from __future__ import annotations

from typing import Any

from assay.scorers._lib.formulas import clamp
from assay.scorers._lib.judge_common import numbered
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Needs,
    Prompt,
    View,
    as_json,
    fmt,
    one_per_item,
)
from assay.scorers._lib.semantic_units import (
    AnswerSimilarityParams,
    SimilarityAnalysis,
    SimilarityUnits,
    has_ground_truth,
    match_points,
    match_tally,
)
from assay.scoring.registry import register_scorer

INSTRUCTIONS = (
    "You compare a response with a ground-truth answer by meaning, unit by unit. "
    "Treat the ground truth as correct."
)

NO_GROUND_TRUTH_REASON = "No ground truth was provided for comparison. Score is 0 by default."
MISSING_GROUND_TRUTH = "Answer Similarity Scorer requires ground truth to be provided"


AnswerSimilarityView = View[AnswerSimilarityParams, SimilarityUnits, SimilarityAnalysis]
"""What AnswerSimilarity's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "answer-similarity",
    label="Answer Similarity",
    params=AnswerSimilarityParams,
    reference="createAnswerSimilarityScorer (answer-similarity-scorer)",
    preview_notes="Needs ground truth. 2 judge calls, 3 with reason='llm'.",
)
class AnswerSimilarity(JudgeScorer[AnswerSimilarityParams, SimilarityUnits, SimilarityAnalysis]):
    """Semantic agreement of the response with the ground truth (LLM judge: semantic units
    of both, then exact/semantic/partial/missing matches, contradictions, extras)."""

    instructions = INSTRUCTIONS
    needs = (
        Needs(
            "ground_truth",
            lambda j: has_ground_truth(j) or not j.params.require_ground_truth,
            MISSING_GROUND_TRUTH,
        ),
    )
    meaning = "semantic agreement of the response with the ground truth, unit by unit"
    preprocess = Prompt(
        "Break the response and the ground truth each into short normalized units of "
        "meaning (one fact or idea per unit). An empty text has no units.",
        SimilarityUnits,
        inputs={
            "response": lambda j: j.output if has_ground_truth(j) else "",
            "ground truth": lambda j: (
                as_json(j.ctx.call.ground_truth) if has_ground_truth(j) else ""
            ),
        },
        description="Extract semantic units of the response and the ground truth",
    )
    analyze = Prompt(
        "For each ground-truth unit, in order, give its best output unit and matchType: "
        '"exact" (same fact, same wording), "semantic" (same meaning), "partial" (part of '
        'it), "missing" (absent, or stated wrongly). A wrong output unit is also listed '
        "in contradictions. List in extraInOutput the output units the ground truth does "
        "not contain.",
        SimilarityAnalysis,
        inputs={
            "ground truth units": lambda j: numbered(j.pre.groundTruthUnits),
            "output units": lambda j: numbered(j.pre.outputUnits),
        },
        check=one_per_item(
            lambda j: j.pre.groundTruthUnits if has_ground_truth(j) else None,
            "matches",
            "ground-truth unit",
        ),
        description="Match ground-truth units to output units",
    )

    def score(self, j: AnswerSimilarityView) -> float:
        analysis = j.analysis
        if not has_ground_truth(j) or analysis is None or not analysis.matches:
            return 0.0
        return clamp(match_points(analysis, j.params))

    def findings(self, j: AnswerSimilarityView) -> dict[str, Any]:
        if not has_ground_truth(j):
            return {"note": NO_GROUND_TRUTH_REASON}
        return {"analysis": j.analysis.model_dump()}

    def reason(self, j: AnswerSimilarityView) -> str:
        if not has_ground_truth(j):
            return NO_GROUND_TRUTH_REASON
        analysis, value = j.analysis, f"{fmt(j.score)}/{fmt(j.params.scale)}"
        if not analysis.matches:
            return f"The score is {value} because no ground-truth units could be matched."
        return f"The score is {value} because {match_tally(analysis)}."
