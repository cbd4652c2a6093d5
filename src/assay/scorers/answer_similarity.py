"""Answer similarity: how closely the response matches the ground-truth answer in meaning.

Reference structure (``createAnswerSimilarityScorer``): a judge call breaks the response
and the ground truth into semantic units; a second call matches every ground-truth unit to
its best output unit (``exact``, ``semantic``, ``partial`` or ``missing``; a factually wrong
unit is ``missing`` and a contradiction) and lists output units the ground truth lacks. The
score (reference formula, exactly)::

    raw = Σ exact → 1 + exact_match_bonus, semantic → semantic_threshold,
          partial → semantic_threshold / 2, missing → −missing_penalty
    s = raw / (n · (1 + exact_match_bonus))
        − #contradictions · contradiction_penalty − min(#extra · extra_info_penalty, 0.2)
    score = round2(clamp(s, 0, 1) · scale)

No ground truth: an error (the reference's message) when ``require_ground_truth``;
otherwise, as in the reference, score 0 with the reason "No ground truth was provided ...".
The ground truth is the run's ``ground_truth`` (a string as is, anything else as JSON).

Deviations from the reference
- The analyze step gets the extracted units only, not the raw texts again.
- With ``reason="llm"`` and no ground truth, the judge is asked to state that there was no
  ground truth (the reference sends its fixed sentence to the judge as the whole prompt).
- Params are bounded (penalties ≥ 0, ``semantic_threshold`` in [0, 1]); the reference does
  not check them. Params merge over the defaults, as in the reference.
- A number of matches that differs from the number of ground-truth units gets one repair
  turn and then fails the run (``status="error"``); the reference divides by the number of
  matches that came back, so a skipped unit silently raises the score.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import capped_penalty, clamp
from assay.scorers._lib.judge_common import ReasonedJudgeParams, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Needs, Prompt, View, fmt, one_per_item

INSTRUCTIONS = (
    "You compare a response with a ground-truth answer by meaning, unit by unit. "
    "Treat the ground truth as correct."
)

NO_GROUND_TRUTH_REASON = "No ground truth was provided for comparison. Score is 0 by default."
MISSING_GROUND_TRUTH = "Answer Similarity Scorer requires ground truth to be provided"

MatchType = Literal["exact", "semantic", "partial", "missing"]


class AnswerSimilarityParams(ReasonedJudgeParams):
    require_ground_truth: bool = Field(
        default=True, description="Fail when the item has no ground truth (else score 0)."
    )
    semantic_threshold: float = Field(
        default=0.8, ge=0.0, le=1.0, description="Credit of a semantic match."
    )
    exact_match_bonus: float = Field(
        default=0.2, ge=0.0, description="Extra credit of an exact match."
    )
    missing_penalty: float = Field(default=0.15, ge=0.0, description="Penalty per missing unit.")
    contradiction_penalty: float = Field(
        default=1.0, ge=0.0, description="Penalty per contradiction."
    )
    extra_info_penalty: float = Field(
        default=0.05, ge=0.0, description="Penalty per extra output unit (at most 0.2 in all)."
    )


class SimilarityUnits(BaseModel):
    outputUnits: list[str] = Field(description="Semantic units of the response.")
    groundTruthUnits: list[str] = Field(description="Semantic units of the ground truth.")


class UnitMatch(BaseModel):
    groundTruthUnit: str
    outputUnit: str | None = Field(description="Best matching output unit, or null.")
    matchType: MatchType
    explanation: str = Field(description="One short sentence.")


class Contradiction(BaseModel):
    outputUnit: str
    groundTruthUnit: str
    explanation: str = Field(description="One short sentence.")


class SimilarityAnalysis(BaseModel):
    matches: list[UnitMatch] = Field(description="One entry per ground-truth unit, in order.")
    extraInOutput: list[str] = Field(description="Output units absent from the ground truth.")
    contradictions: list[Contradiction] = Field(description="Output units that contradict it.")


def js_falsy(value: Any) -> bool:
    """JavaScript falsiness (``None``, ``''``, ``0``, ``False``, ``NaN``); ``[]``/``{}`` are
    truthy, as in JS."""
    if value is None or value is False:
        return True
    if isinstance(value, str):
        return value == ""
    if isinstance(value, int | float):
        return value == 0 or (isinstance(value, float) and math.isnan(value))
    return False


def ground_truth_text(value: Any) -> str:
    """A string as is, anything else as ``JSON.stringify`` would write it."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _has_truth(j: View[Any]) -> bool:
    return not js_falsy(j.ctx.call.ground_truth)


class AnswerSimilarity(JudgeScorer[AnswerSimilarityParams]):
    """Semantic agreement of the response with the ground truth (LLM judge: semantic units
    of both, then exact/semantic/partial/missing matches, contradictions, extras)."""

    type_id, label, params_model = "answer-similarity", "Answer Similarity", AnswerSimilarityParams
    reference = "createAnswerSimilarityScorer (answer-similarity-scorer)"
    preview_notes = "Needs ground truth. 2 judge calls, 3 with reason='llm'."
    instructions = INSTRUCTIONS
    needs = (
        Needs(
            "ground_truth",
            lambda j: _has_truth(j) or not j.params.require_ground_truth,
            MISSING_GROUND_TRUTH,
        ),
    )
    meaning = "semantic agreement of the response with the ground truth, unit by unit"
    preprocess = Prompt(
        "Break the response and the ground truth each into short normalized units of "
        "meaning (one fact or idea per unit). An empty text has no units.",
        SimilarityUnits,
        inputs={
            "response": lambda j: j.output if _has_truth(j) else "",
            "ground truth": lambda j: (
                ground_truth_text(j.ctx.call.ground_truth) if _has_truth(j) else ""
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
            lambda j: j.pre.groundTruthUnits if _has_truth(j) else None,
            "matches",
            "ground-truth unit",
        ),
        description="Match ground-truth units to output units",
    )

    def score(self, j: View[AnswerSimilarityParams]) -> float:
        p, analysis = j.params, j.analysis
        if not _has_truth(j) or analysis is None or not analysis.matches:
            return 0.0
        credit = {
            "exact": 1.0 + p.exact_match_bonus,
            "semantic": p.semantic_threshold,
            "partial": p.semantic_threshold * 0.5,
            "missing": -p.missing_penalty,
        }
        raw = sum(credit[m.matchType] for m in analysis.matches)
        value = raw / (len(analysis.matches) * (1.0 + p.exact_match_bonus))
        value -= len(analysis.contradictions) * p.contradiction_penalty
        value -= capped_penalty(len(analysis.extraInOutput), p.extra_info_penalty, 0.2)
        return clamp(value)

    def findings(self, j: View[AnswerSimilarityParams]) -> dict[str, Any]:
        if not _has_truth(j):
            return {"note": NO_GROUND_TRUTH_REASON}
        return {"analysis": j.analysis.model_dump()}

    def reason(self, j: View[AnswerSimilarityParams]) -> str:
        if not _has_truth(j):
            return NO_GROUND_TRUTH_REASON
        analysis, value = j.analysis, f"{fmt(j.score)}/{fmt(j.params.scale)}"
        if not analysis.matches:
            return f"The score is {value} because no ground-truth units could be matched."
        kinds = [m.matchType for m in analysis.matches]
        text = (
            f"The score is {value} because of {len(kinds)} ground-truth units "
            f"{kinds.count('exact')} match exactly, {kinds.count('semantic')} in meaning, "
            f"{kinds.count('partial')} partly and {kinds.count('missing')} are missing; the "
            f"output has {len(analysis.contradictions)} contradictions and "
            f"{len(analysis.extraInOutput)} extra units"
        )
        if analysis.contradictions:
            text += "; contradicted: " + "; ".join(
                f'"{c.groundTruthUnit}" ({c.explanation})' for c in analysis.contradictions
            )
        return text + "."
