"""Answer similarity's parts: its params, the semantic units of both texts, the judge's
matches and contradictions, the match-points formula and the template reason's tally, and
JavaScript falsiness (the reference's "no ground truth" test).

Kept apart from ``answer_similarity`` so the scorer module is its declaration only.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import capped_penalty
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import AnyView


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


MatchType = Literal["exact", "semantic", "partial", "missing"]


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


def has_ground_truth(j: AnyView) -> bool:
    """Whether the run has a ground truth, as the reference decides it (JS truthiness)."""
    return not js_falsy(j.ctx.call.ground_truth)


def match_points(analysis: SimilarityAnalysis, p: AnswerSimilarityParams) -> float:
    """The reference formula before clamping: match credits over the best possible, minus
    the contradiction and (capped) extra-unit penalties. Needs at least one match."""
    credit = {
        "exact": 1.0 + p.exact_match_bonus,
        "semantic": p.semantic_threshold,
        "partial": p.semantic_threshold * 0.5,
        "missing": -p.missing_penalty,
    }
    raw = sum(credit[m.matchType] for m in analysis.matches)
    value = raw / (len(analysis.matches) * (1.0 + p.exact_match_bonus))
    value -= len(analysis.contradictions) * p.contradiction_penalty
    return value - capped_penalty(len(analysis.extraInOutput), p.extra_info_penalty, 0.2)


def match_tally(analysis: SimilarityAnalysis) -> str:
    """The template reason after "because": the match kinds, contradictions and extras."""
    kinds = [m.matchType for m in analysis.matches]
    text = (
        f"of {len(kinds)} ground-truth units "
        f"{kinds.count('exact')} match exactly, {kinds.count('semantic')} in meaning, "
        f"{kinds.count('partial')} partly and {kinds.count('missing')} are missing; the "
        f"output has {len(analysis.contradictions)} contradictions and "
        f"{len(analysis.extraInOutput)} extra units"
    )
    if analysis.contradictions:
        text += "; contradicted: " + "; ".join(
            f'"{c.groundTruthUnit}" ({c.explanation})' for c in analysis.contradictions
        )
    return text
