"""Prompt alignment's four aspects: the judge's analysis, the weights that combine them, and
which prompts (user message, system prompt, remembered history) a run shows the judge.

Kept apart from ``prompt_alignment`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.messages.chat import get_combined_system_prompt, get_conversation_history
from assay.scorers._lib.judge_scorer import AnyView
from assay.scoring.registry import ScorerParams

EvaluationMode = Literal["user", "system", "both"]

USER_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
SYSTEM_WEIGHTS = (0.35, 0.35, 0.15, 0.15)
BOTH_USER_WEIGHT = 0.7
BOTH_SYSTEM_WEIGHT = 0.3


class ConversationHistory(ScorerParams):
    max_messages: int = Field(
        default=10, ge=1, description="How many recent remembered messages to include."
    )


class IntentAlignment(BaseModel):
    score: float = Field(ge=0.0, le=1.0, description="How well the main intent is addressed.")
    primaryIntent: str = Field(description="The primary intent of the prompt.")
    isAddressed: bool = Field(description="Whether the primary intent is addressed.")
    reasoning: str = Field(description="One or two sentences.")


class Requirement(BaseModel):
    requirement: str = Field(description="One explicit requirement or constraint.")
    isFulfilled: bool = Field(description="Whether the response fulfils it.")
    reasoning: str = Field(description="One sentence.")


class RequirementsFulfillment(BaseModel):
    requirements: list[Requirement] = Field(description="The explicit requirements found.")
    overallScore: float = Field(ge=0.0, le=1.0, description="How well they are fulfilled.")


class Completeness(BaseModel):
    score: float = Field(ge=0.0, le=1.0, description="How complete the response is.")
    missingElements: list[str] = Field(description="What the response leaves out.")
    reasoning: str = Field(description="One or two sentences.")


class ResponseAppropriateness(BaseModel):
    score: float = Field(ge=0.0, le=1.0, description="How appropriate format and tone are.")
    formatAlignment: bool = Field(description="Whether the format matches what was asked.")
    toneAlignment: bool = Field(description="Whether the tone matches what was asked.")
    reasoning: str = Field(description="One or two sentences.")


class PromptAlignmentAnalysis(BaseModel):
    intentAlignment: IntentAlignment
    requirementsFulfillment: RequirementsFulfillment
    completeness: Completeness
    responseAppropriateness: ResponseAppropriateness
    overallAssessment: str = Field(description="One or two sentences on the alignment overall.")


def weighted(analysis: PromptAlignmentAnalysis, weights: tuple[float, ...]) -> float:
    """The four aspect scores combined with ``weights`` (intent, requirements, ...)."""
    w_intent, w_requirements, w_completeness, w_appropriateness = weights
    return (
        analysis.intentAlignment.score * w_intent
        + analysis.requirementsFulfillment.overallScore * w_requirements
        + analysis.completeness.score * w_completeness
        + analysis.responseAppropriateness.score * w_appropriateness
    )


def alignment_score(analysis: PromptAlignmentAnalysis, mode: EvaluationMode) -> float:
    """The mode's weighted sum, unscaled and unrounded."""
    if mode == "user":
        return weighted(analysis, USER_WEIGHTS)
    if mode == "system":
        return weighted(analysis, SYSTEM_WEIGHTS)
    return BOTH_USER_WEIGHT * weighted(analysis, USER_WEIGHTS) + BOTH_SYSTEM_WEIGHT * weighted(
        analysis, SYSTEM_WEIGHTS
    )


def system_prompt(j: AnyView) -> str | None:
    """The run's system messages combined (agent-shaped or chat input), or ``None``."""
    return get_combined_system_prompt(j.ctx.call.input) or None


def shown_user_prompt(j: AnyView) -> str | None:
    """The user's message, unless the mode is ``system``."""
    return (j.input or None) if j.params.evaluation_mode != "system" else None


def shown_system_prompt(j: AnyView) -> str | None:
    """The system prompt, unless the mode is ``user``."""
    return system_prompt(j) if j.params.evaluation_mode != "user" else None


def remembered_history(j: AnyView) -> Any:
    """The recent remembered messages, when ``include_conversation_history`` is on."""
    limit = j.params.include_conversation_history
    if limit is False:
        return None
    limit = limit.max_messages if isinstance(limit, ConversationHistory) else 10
    return get_conversation_history(j.ctx.call.input, limit) or None


def prompt_present(j: AnyView) -> bool:
    """Whether the prompt the mode aligns with is there (user, system, or either)."""
    mode = j.params.evaluation_mode
    if mode == "user":
        return bool(j.input)
    return bool(system_prompt(j) if mode == "system" else j.input or system_prompt(j))


def missing_prompt(j: AnyView) -> str:
    """The reference's message for a run without the prompt the mode needs."""
    mode: EvaluationMode = j.params.evaluation_mode
    return {
        "user": "User prompt is required for user prompt alignment scoring",
        "system": "System prompt is required for system prompt alignment scoring",
        "both": "A user or system prompt is required for combined alignment scoring",
    }[mode]
