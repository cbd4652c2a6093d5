"""Prompt alignment: does the response do what the user asked and what the system prompt says?

Formula, modes and deviations from the reference: docs/scorers.md, "prompt-alignment"."""

from __future__ import annotations

from pydantic import Field

from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import JudgeScorer, Needs, Prompt, View, listed, needs_output
from assay.scorers._lib.prompt_alignment_aspects import (
    ConversationHistory,
    EvaluationMode,
    PromptAlignmentAnalysis,
    alignment_score,
    missing_prompt,
    prompt_present,
    remembered_history,
    shown_system_prompt,
    shown_user_prompt,
)
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You assess how well an assistant's response aligns with the prompt it was given: whether it
addresses the intent, fulfils each explicit requirement or constraint, is complete, and has
an appropriate format and tone. Score each aspect from 0 to 1, where 1 means fully aligned.
Judge alignment with the prompt, not the factual correctness of the response."""

_TASK = {
    "user": "Evaluate how well the response aligns with the user's request: its intent, "
    "explicit requirements, completeness, and expected format and tone.",
    "system": "Evaluate how well the response complies with the system prompt: its "
    "behavioural guidelines, constraints and rules, and its required format and tone.",
    "both": "Evaluate how well the response aligns with the user's request and complies with "
    "the system prompt: intent, explicit requirements and constraints from both, "
    "completeness, and format and tone.",
}


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


PromptAlignmentView = View[PromptAlignmentParams, None, PromptAlignmentAnalysis]
"""What PromptAlignment's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "prompt-alignment",
    label="Prompt Alignment",
    params=PromptAlignmentParams,
    reference="createPromptAlignmentScorerLLM (prompt-alignment-scorer)",
    preview_notes=(
        "'system' and 'both' modes read system messages from an agent-shaped or chat input; "
        "'both' combines the user and system weightings 70/30."
    ),
)
class PromptAlignment(JudgeScorer[PromptAlignmentParams, None, PromptAlignmentAnalysis]):
    """How well the response follows the user's request and/or the system prompt: intent,
    requirements, completeness, format and tone, combined with fixed weights."""

    instructions = INSTRUCTIONS
    needs = (
        Needs("input", prompt_present, missing_prompt),
        needs_output("Agent response is required for prompt alignment scoring"),
    )
    analyze = Prompt(
        lambda j: _TASK[j.params.evaluation_mode],
        PromptAlignmentAnalysis,
        inputs={
            "earlier conversation": remembered_history,
            "user prompt": shown_user_prompt,
            "system prompt": shown_system_prompt,
            "response": lambda j: j.output,
        },
        description="Rate intent, requirements, completeness and appropriateness",
    )

    def describe_score(self, j: PromptAlignmentView) -> str:
        return (
            f"in '{j.params.evaluation_mode}' mode, it weighs intent alignment, requirements "
            "fulfilment, completeness and format/tone appropriateness from the analysis"
        )

    def score(self, j: PromptAlignmentView) -> float:
        return alignment_score(j.analysis, j.params.evaluation_mode)

    def reason(self, j: PromptAlignmentView) -> str:
        a: PromptAlignmentAnalysis = j.analysis
        text = (
            f"{j.headline} ({j.params.evaluation_mode} mode): "
            f"intent {a.intentAlignment.score}, requirements "
            f"{a.requirementsFulfillment.overallScore}, completeness {a.completeness.score}, "
            f"appropriateness {a.responseAppropriateness.score}."
        )
        unmet = [r.requirement for r in a.requirementsFulfillment.requirements if not r.isFulfilled]
        text += listed("Unmet requirements", unmet)
        return text + listed("Missing", a.completeness.missingElements)
