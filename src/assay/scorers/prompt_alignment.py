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

import json
from typing import Literal

from pydantic import BaseModel, Field

from assay.messages.chat import get_combined_system_prompt, get_conversation_history
from assay.rounding import round2
from assay.scorers._lib.judge_common import (
    ReasonedJudgeParams,
    data_block,
    judge_config,
    with_reason,
)
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

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


@register_scorer(
    "prompt-alignment",
    label="Prompt Alignment",
    description=(
        "How well the response follows the user's request and/or the system prompt: intent, "
        "requirements, completeness, format and tone, combined with fixed weights."
    ),
    params=PromptAlignmentParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createPromptAlignmentScorerLLM (prompt-alignment-scorer)",
    preview_notes=(
        "'system' and 'both' modes read system messages from an agent-shaped or chat input; "
        "'both' combines the user and system weightings 70/30."
    ),
)
def build(params: PromptAlignmentParams) -> Scorer:
    mode = params.evaluation_mode
    history_option = params.include_conversation_history
    history_limit: int | None
    if isinstance(history_option, ConversationHistory):
        history_limit = history_option.max_messages
    else:
        history_limit = 10 if history_option else None

    def analyze_prompt(ctx: StepContext) -> str:
        user_prompt = ctx.input_text
        system_prompt = get_combined_system_prompt(ctx.call.input)
        response = ctx.output_text
        if mode == "user" and not user_prompt:
            raise ValueError("User prompt is required for user prompt alignment scoring")
        if mode == "system" and not system_prompt:
            raise ValueError("System prompt is required for system prompt alignment scoring")
        if mode == "both" and not user_prompt and not system_prompt:
            raise ValueError("A user or system prompt is required for combined alignment scoring")
        if not response:
            raise ValueError("Agent response is required for prompt alignment scoring")
        parts = [_TASK[mode]]
        if history_limit is not None:
            history = get_conversation_history(ctx.call.input, history_limit)
            if history:
                parts.append(data_block("earlier conversation", history))
        if mode in ("user", "both") and user_prompt:
            parts.append(data_block("user prompt", user_prompt))
        if mode in ("system", "both") and system_prompt:
            parts.append(data_block("system prompt", system_prompt))
        parts.append(data_block("response", response))
        return "\n\n".join(parts)

    def score(ctx: StepContext) -> float:
        analysis: PromptAlignmentAnalysis = ctx.analyze_result
        return round2(alignment_score(analysis, mode) * params.scale)

    def reason_prompt(ctx: StepContext) -> str:
        analysis: PromptAlignmentAnalysis = ctx.analyze_result
        return "\n\n".join(
            [
                f"The prompt alignment score is {ctx.score} on a scale of 0 to {params.scale}, "
                f"in '{mode}' mode. It weighs intent alignment, requirements fulfilment, "
                "completeness and format/tone appropriateness from the analysis below.",
                data_block("analysis", json.dumps(analysis.model_dump(), ensure_ascii=False)),
                "In two or three plain sentences, explain why the score is what it is, naming "
                "unmet requirements or missing elements if any. Answer in plain text, not "
                "JSON.",
            ]
        )

    def reason_template(ctx: StepContext) -> str:
        analysis: PromptAlignmentAnalysis = ctx.analyze_result
        return template_reason(analysis, ctx.score, params.scale, mode)

    scorer = (
        Scorer(
            "prompt-alignment",
            description="Alignment of the response with the user and/or system prompt",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .analyze(
            judge_step(
                analyze_prompt,
                PromptAlignmentAnalysis,
                description="Rate intent, requirements, completeness and appropriateness",
                version="1",
            )
        )
        .score(score)
    )
    return with_reason(
        scorer,
        params.reason,
        prompt=reason_prompt,
        template=reason_template,
        description="Explain the alignment score",
    )


def template_reason(
    analysis: PromptAlignmentAnalysis, score: float | None, scale: float, mode: EvaluationMode
) -> str:
    """A reason written from the analysis, without a model call."""
    text = (
        f"The score is {score} of {scale} ({mode} mode): intent "
        f"{analysis.intentAlignment.score}, requirements "
        f"{analysis.requirementsFulfillment.overallScore}, completeness "
        f"{analysis.completeness.score}, appropriateness "
        f"{analysis.responseAppropriateness.score}."
    )
    unmet = [
        r.requirement for r in analysis.requirementsFulfillment.requirements if not r.isFulfilled
    ]
    if unmet:
        text += " Unmet requirements: " + "; ".join(unmet) + "."
    if analysis.completeness.missingElements:
        text += " Missing: " + "; ".join(analysis.completeness.missingElements) + "."
    return text
