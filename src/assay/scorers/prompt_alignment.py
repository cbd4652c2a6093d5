"""Prompt alignment: does the response do what the user asked and what the system prompt says?

Parity with ``createPromptAlignmentScorerLLM`` (reference §2.13). One judge call rates the
response on four aspects, each in [0, 1]: intent alignment, requirements fulfilment,
completeness and appropriateness (format and tone). The score is a weighted sum:

- ``user`` mode: ``0.4·intent + 0.3·requirements + 0.2·completeness + 0.1·appropriateness``;
- ``system`` mode: ``0.35, 0.35, 0.15, 0.15`` (following rules weighs as much as intent);
- ``both`` mode (default): ``0.7·user_sum + 0.3·system_sum`` of the same analysis.

The judge sees the user's message, the combined system prompt (by mode) and, when
``include_conversation_history`` is on, the recent remembered messages of an agent run.

Judge calls: one (analyze), plus one for an ``llm`` reason.

Deviations from the reference
- ``both`` mode: the reference computes ``0.7·u + 0.3·u`` with the *user* weights for both
  halves (its code notes that the system half reuses the user score), so the system weights
  never apply and the result equals user mode. Here the system half is the system-weighted
  sum, as the reference documents (70 % user, 30 % system). Scores in ``both`` mode
  therefore differ from the reference whenever the aspects are not all equal.
- ``include_conversation_history`` (``true`` or ``{"max_messages": n}``, default off, 10
  messages) follows the spec; newer reference versions spell it
  ``contextMode``/``maxRememberedMessages``.
- The reason prompt carries the score and the analysis only; it does not repeat the prompts
  and the response. The reference's "Unable to analyze prompt alignment" branch cannot occur:
  a failed analysis makes the run an error.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.messages.chat import get_combined_system_prompt, get_conversation_history
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    MissingInputError,
    Prompt,
    View,
    needs_output,
)
from assay.scoring.registry import ScorerParams

INSTRUCTIONS = """\
You assess how well an assistant's response aligns with the prompt it was given: whether it
addresses the intent, fulfils each explicit requirement or constraint, is complete, and has
an appropriate format and tone. Score each aspect from 0 to 1, where 1 means fully aligned.
Judge alignment with the prompt, not the factual correctness of the response."""

EvaluationMode = Literal["user", "system", "both"]

USER_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
SYSTEM_WEIGHTS = (0.35, 0.35, 0.15, 0.15)
BOTH_USER_WEIGHT = 0.7
BOTH_SYSTEM_WEIGHT = 0.3

_TASK = {
    "user": "Evaluate how well the response aligns with the user's request: its intent, "
    "explicit requirements, completeness, and expected format and tone.",
    "system": "Evaluate how well the response complies with the system prompt: its "
    "behavioural guidelines, constraints and rules, and its required format and tone.",
    "both": "Evaluate how well the response aligns with the user's request and complies with "
    "the system prompt: intent, explicit requirements and constraints from both, "
    "completeness, and format and tone.",
}


class ConversationHistory(ScorerParams):
    max_messages: int = Field(
        default=10, ge=1, description="How many recent remembered messages to include."
    )


class PromptAlignmentParams(ReasonedJudgeParams):
    evaluation_mode: EvaluationMode = Field(
        default="both",
        description="Align with the user prompt, the system prompt, or both (70/30).",
    )
    include_conversation_history: bool | ConversationHistory = Field(
        default=False,
        description="Show the judge the recent remembered messages of an agent run "
        "(true = the last 10, or {max_messages: n}).",
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


def _system(j: View[Any]) -> str | None:
    return get_combined_system_prompt(j.ctx.call.input) or None


def _history(j: View[Any]) -> Any:
    limit = j.params.include_conversation_history
    if limit is False:
        return None
    limit = limit.max_messages if isinstance(limit, ConversationHistory) else 10
    return get_conversation_history(j.ctx.call.input, limit) or None


def _prompt_present(j: View[Any]) -> bool:
    mode = j.params.evaluation_mode
    if mode == "user":
        return bool(j.input)
    return bool(_system(j) if mode == "system" else j.input or _system(j))


def _missing_prompt(mode: EvaluationMode) -> str:
    return {
        "user": "User prompt is required for user prompt alignment scoring",
        "system": "System prompt is required for system prompt alignment scoring",
        "both": "A user or system prompt is required for combined alignment scoring",
    }[mode]


class PromptAlignment(JudgeScorer[PromptAlignmentParams]):
    """How well the response follows the user's request and/or the system prompt: intent,
    requirements, completeness, format and tone, combined with fixed weights."""

    type_id, label, params_model = "prompt-alignment", "Prompt Alignment", PromptAlignmentParams
    reference = "createPromptAlignmentScorerLLM (prompt-alignment-scorer)"
    preview_notes = (
        "'system' and 'both' modes read system messages from an agent-shaped or chat input; "
        "'both' combines the user and system weightings 70/30."
    )
    instructions = INSTRUCTIONS
    needs = (needs_output("Agent response is required for prompt alignment scoring"),)
    analyze = Prompt(
        lambda j: _TASK[j.params.evaluation_mode],
        PromptAlignmentAnalysis,
        inputs={
            "earlier conversation": _history,
            "user prompt": lambda j: (
                (j.input or None) if j.params.evaluation_mode != "system" else None
            ),
            "system prompt": lambda j: _system(j) if j.params.evaluation_mode != "user" else None,
            "response": lambda j: j.output,
        },
        description="Rate intent, requirements, completeness and appropriateness",
    )

    def check_needs(self, j: View[PromptAlignmentParams]) -> None:
        if not _prompt_present(j):
            mode = j.params.evaluation_mode
            raise MissingInputError(f"prompt-alignment needs input: {_missing_prompt(mode)}")
        super().check_needs(j)

    def describe_score(self, j: View[PromptAlignmentParams]) -> str:
        return (
            f"in '{j.params.evaluation_mode}' mode, it weighs intent alignment, requirements "
            "fulfilment, completeness and format/tone appropriateness from the analysis"
        )

    def score(self, j: View[PromptAlignmentParams]) -> float:
        return alignment_score(j.analysis, j.params.evaluation_mode)

    def reason(self, j: View[PromptAlignmentParams]) -> str:
        a: PromptAlignmentAnalysis = j.analysis
        text = (
            f"The score is {j.score} of {j.params.scale} ({j.params.evaluation_mode} mode): "
            f"intent {a.intentAlignment.score}, requirements "
            f"{a.requirementsFulfillment.overallScore}, completeness {a.completeness.score}, "
            f"appropriateness {a.responseAppropriateness.score}."
        )
        unmet = [r.requirement for r in a.requirementsFulfillment.requirements if not r.isFulfilled]
        if unmet:
            text += " Unmet requirements: " + "; ".join(unmet) + "."
        if a.completeness.missingElements:
            text += " Missing: " + "; ".join(a.completeness.missingElements) + "."
        return text
