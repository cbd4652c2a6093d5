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

from assay.rounding import round2
from assay.scorers._lib.judge_common import (
    ReasonedJudgeParams,
    data_block,
    judge_config,
    numbered,
    with_reason,
)
from assay.scorers._lib.verdicts import one_per
from assay.scoring.context import StepContext
from assay.scoring.registry import register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

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


def _fmt(value: float) -> str:
    return f"{value:g}"


@register_scorer(
    "answer-similarity",
    label="Answer Similarity",
    description=(
        "Semantic agreement of the response with the ground truth (LLM judge: semantic units "
        "of both, then exact/semantic/partial/missing matches, contradictions, extras)."
    ),
    params=AnswerSimilarityParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createAnswerSimilarityScorer (answer-similarity-scorer)",
    preview_notes="Needs ground truth. 2 judge calls, 3 with reason='llm'.",
)
def build(params: AnswerSimilarityParams) -> Scorer:
    credit: dict[str, float] = {
        "exact": 1.0 + params.exact_match_bonus,
        "semantic": params.semantic_threshold,
        "partial": params.semantic_threshold * 0.5,
        "missing": -params.missing_penalty,
    }

    def preprocess_prompt(ctx: StepContext) -> str:
        if js_falsy(ctx.call.ground_truth):
            if params.require_ground_truth:
                raise ValueError(MISSING_GROUND_TRUTH)
            output, truth = "", ""
        else:
            output, truth = ctx.output_text, ground_truth_text(ctx.call.ground_truth)
        return (
            "Break the response and the ground truth each into short normalized units of "
            "meaning (one fact or idea per unit). An empty text has no units.\n\n"
            f"{data_block('response', output)}\n\n{data_block('ground truth', truth)}"
        )

    def analyze_prompt(ctx: StepContext) -> str:
        units: SimilarityUnits = ctx.preprocess_result
        return (
            "For each ground-truth unit, in order, give its best output unit and matchType: "
            '"exact" (same fact, same wording), "semantic" (same meaning), "partial" (part of '
            'it), "missing" (absent, or stated wrongly). A wrong output unit is also listed '
            "in contradictions. List in extraInOutput the output units the ground truth does "
            "not contain.\n\n"
            f"{data_block('ground truth units', numbered(units.groundTruthUnits))}\n\n"
            f"{data_block('output units', numbered(units.outputUnits))}"
        )

    def ground_truth_units(ctx: StepContext) -> list[str] | None:
        """The units the matches must cover; none to check without a ground truth."""
        if js_falsy(ctx.call.ground_truth):
            return None
        units: SimilarityUnits = ctx.preprocess_result
        return units.groundTruthUnits

    def score(ctx: StepContext) -> float:
        if js_falsy(ctx.call.ground_truth):
            return 0.0
        analysis: SimilarityAnalysis | None = ctx.analyze_result
        if analysis is None or not analysis.matches:
            return 0.0
        n = len(analysis.matches)
        raw = sum(credit[m.matchType] for m in analysis.matches)
        value = raw / (n * (1.0 + params.exact_match_bonus))
        value -= len(analysis.contradictions) * params.contradiction_penalty
        value -= min(len(analysis.extraInOutput) * params.extra_info_penalty, 0.2)
        value = min(max(value, 0.0), 1.0)
        return round2(value * params.scale)

    def template_reason(ctx: StepContext) -> str:
        if js_falsy(ctx.call.ground_truth):
            return NO_GROUND_TRUTH_REASON
        analysis: SimilarityAnalysis = ctx.analyze_result
        value = f"{_fmt(ctx.score or 0.0)}/{_fmt(params.scale)}"
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

    def reason_prompt(ctx: StepContext) -> str:
        if js_falsy(ctx.call.ground_truth):
            return f"State in one sentence: {NO_GROUND_TRUTH_REASON}"
        value = f"{_fmt(ctx.score or 0.0)}/{_fmt(params.scale)}"
        analysis: SimilarityAnalysis = ctx.analyze_result
        return (
            f"The answer-similarity score is {value}. In at most three sentences, explain it, "
            f'starting with "The score is {value} because".\n\n'
            + data_block("analysis", analysis.model_dump())
        )

    scorer = (
        Scorer(
            "answer-similarity",
            description="Similarity of the response to the ground truth",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .preprocess(
            judge_step(
                preprocess_prompt,
                SimilarityUnits,
                description="Extract semantic units of the response and the ground truth",
                version="1",
            )
        )
        .analyze(
            judge_step(
                analyze_prompt,
                SimilarityAnalysis,
                description="Match ground-truth units to output units",
                version="1",
                check=one_per(ground_truth_units, "matches", "ground-truth unit"),
            )
        )
        .score(score)
    )
    return with_reason(
        scorer,
        params.reason,
        prompt=reason_prompt,
        template=template_reason,
        description="Explain the score",
    )
