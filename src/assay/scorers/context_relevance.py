"""Context relevance: how relevant the provided context was, and whether the response used it.

Parity with ``createContextRelevanceScorerLLM`` (reference §2.8). The judge rates each
context passage's relevance to the question (high / medium / low / none), says whether the
response used it, and lists information that was missing from the context. The score is
``max(0, base − unused − missing) × scale`` with ``base`` the mean relevance weight
(high 1, medium 0.7, low 0.3, none 0), ``unused`` a penalty per highly relevant passage the
response ignored and ``missing`` a capped penalty per missing piece of information.

Judge calls: one (analyze), plus one for an ``llm`` reason.

Deviations from the reference
- The reference's ``contextExtractor`` function becomes the run's ``context`` argument: it
  takes precedence, and the ``context`` param is the fallback. A run with no context from
  either source takes the reference's documented branch: the judge is asked about the
  placeholder passage "[No context was provided for evaluation]" and the score is
  ``1.0 × scale`` (unrounded), with the reference's fixed explanation.
- Evaluations that are not exactly one per passage (``context_index`` 0..n-1, each once)
  get one repair turn and then fail the run (``status="error"``). The reference averages
  whatever evaluations came back, and with none at all returns ``0.0`` or ``1.0`` unscaled
  (an unjudged context is not a score). With no context the judge's answer is not checked:
  the score is fixed (see above).
- ``penalties`` given partially are merged over the defaults (as the reference does too).
- The reason prompt carries the score, the evaluations and the missing information; it does
  not repeat the passages' full text or the response.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from assay.rounding import round2
from assay.scorers._lib.judge_common import (
    ContextJudgeParams,
    data_block,
    judge_config,
    numbered,
    run_context,
    with_reason,
)
from assay.scorers._lib.verdicts import each_once
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

INSTRUCTIONS = """\
You assess the context passages given to an assistant for answering a question. For each
passage you rate its relevance to the question (high, medium, low or none) and say whether
the assistant's response actually used it. You also list information the question needed
that none of the passages provided. Be concrete and brief."""

NO_CONTEXT_PLACEHOLDER = "[No context was provided for evaluation]"

RELEVANCE_WEIGHTS: dict[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}

RelevanceLevel = Literal["high", "medium", "low", "none"]


class ContextRelevancePenalties(ScorerParams):
    unused_high_relevance_context: float = Field(
        default=0.1, ge=0.0, description="Penalty per highly relevant passage left unused."
    )
    missing_context_per_item: float = Field(
        default=0.15, ge=0.0, description="Penalty per piece of missing information."
    )
    max_missing_context_penalty: float = Field(
        default=0.5, ge=0.0, description="Cap on the total missing-information penalty."
    )


class ContextRelevanceParams(ContextJudgeParams):
    penalties: ContextRelevancePenalties = Field(
        default_factory=ContextRelevancePenalties,
        description="Penalty rates; keys given are merged over the defaults.",
    )


class ContextEvaluation(BaseModel):
    context_index: int = Field(description="Index of the passage, as numbered in the prompt.")
    contextPiece: str = Field(description="The passage, or its first words to identify it.")
    relevanceLevel: RelevanceLevel = Field(description="Relevance of the passage to the question.")
    wasUsed: bool = Field(description="Whether the response used information from the passage.")
    reasoning: str = Field(description="One sentence explaining the rating.")


class ContextRelevanceAnalysis(BaseModel):
    evaluations: list[ContextEvaluation] = Field(description="One evaluation per passage.")
    missingContext: list[str] = Field(
        default_factory=list,
        description="Information the question needed that no passage provided.",
    )
    overallAssessment: str = Field(description="One or two sentences on the context overall.")


def no_context_reason(score: float | None) -> str:
    """The reference's fixed explanation for a run without context."""
    return (
        "No context was available for evaluation. The agent response was generated without "
        f"any supporting context. Score: {score}"
    )


@register_scorer(
    "context-relevance",
    label="Context Relevance",
    description=(
        "How relevant the provided context passages were to the question and whether the "
        "response used the relevant ones, with penalties for missing information."
    ),
    params=ContextRelevanceParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createContextRelevanceScorerLLM (context-relevance-scorer)",
    preview_notes=(
        "Context comes from the run's `context` or the `context` param; with none at all the "
        "score is the maximum (the reference's behaviour)."
    ),
)
def build(params: ContextRelevanceParams) -> Scorer:
    penalties = params.penalties

    def context_of(ctx: StepContext) -> list[str]:
        return run_context(ctx, params.context)

    def passage_indexes(ctx: StepContext) -> range | None:
        """The indexes the evaluations must cover; none to check without context."""
        passages = context_of(ctx)
        return range(len(passages)) if passages else None

    def analyze_prompt(ctx: StepContext) -> str:
        context = context_of(ctx) or [NO_CONTEXT_PLACEHOLDER]
        return "\n\n".join(
            [
                "Evaluate each numbered context passage for the question and the response: "
                "its relevance level, whether the response used it, and why. Then list any "
                "information the question needed that the passages lacked (an empty list if "
                "none), and give an overall assessment.",
                data_block("question", ctx.input_text),
                data_block("response", ctx.output_text),
                data_block("context passages", numbered(context)),
            ]
        )

    def score(ctx: StepContext) -> float:
        if not context_of(ctx):
            return 1.0 * params.scale
        analysis: ContextRelevanceAnalysis = ctx.analyze_result
        evaluations = analysis.evaluations  # one per passage (the step's check)
        base = sum(RELEVANCE_WEIGHTS[e.relevanceLevel] for e in evaluations) / len(evaluations)
        unused = sum(1 for e in evaluations if e.relevanceLevel == "high" and not e.wasUsed)
        usage_penalty = unused * penalties.unused_high_relevance_context
        missing_penalty = min(
            len(analysis.missingContext) * penalties.missing_context_per_item,
            penalties.max_missing_context_penalty,
        )
        return round2(max(0.0, base - usage_penalty - missing_penalty) * params.scale)

    def reason_prompt(ctx: StepContext) -> str:
        if not context_of(ctx):
            return (
                "Restate this evaluation result in one plain sentence (plain text, not JSON): "
                + no_context_reason(ctx.score)
            )
        analysis: ContextRelevanceAnalysis = ctx.analyze_result
        evaluations = [
            {
                "context_index": e.context_index,
                "relevanceLevel": e.relevanceLevel,
                "wasUsed": e.wasUsed,
                "reasoning": e.reasoning,
            }
            for e in analysis.evaluations
        ]
        return "\n\n".join(
            [
                f"The context relevance score is {ctx.score} on a scale of 0 to {params.scale}. "
                "It is the mean relevance of the passages (high 1, medium 0.7, low 0.3, none 0), "
                f"minus {penalties.unused_high_relevance_context} per highly relevant passage "
                f"the response did not use and {penalties.missing_context_per_item} per piece "
                f"of missing information (at most {penalties.max_missing_context_penalty}).",
                data_block("passage evaluations", json.dumps(evaluations, ensure_ascii=False)),
                data_block(
                    "missing information", json.dumps(analysis.missingContext, ensure_ascii=False)
                ),
                "In two or three plain sentences, explain why the score is what it is. "
                "Answer in plain text, not JSON.",
            ]
        )

    def reason_template(ctx: StepContext) -> str:
        if not context_of(ctx):
            return no_context_reason(ctx.score)
        analysis: ContextRelevanceAnalysis = ctx.analyze_result
        return template_reason(analysis, ctx.score, params.scale)

    scorer = (
        Scorer(
            "context-relevance",
            description="Context relevance and use",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .analyze(
            judge_step(
                analyze_prompt,
                ContextRelevanceAnalysis,
                description="Rate each passage's relevance and whether the response used it",
                version="1",
                check=each_once(passage_indexes, "evaluations", "context_index", "passage"),
            )
        )
        .score(score)
    )
    return with_reason(
        scorer,
        params.reason,
        prompt=reason_prompt,
        template=reason_template,
        description="Explain the relevance score",
    )


def template_reason(analysis: ContextRelevanceAnalysis, score: float | None, scale: float) -> str:
    """A reason written from the evaluations (one per passage), without a model call."""
    evaluations = analysis.evaluations
    counts = {
        level: sum(1 for e in evaluations if e.relevanceLevel == level)
        for level in RELEVANCE_WEIGHTS
    }
    levels = ", ".join(f"{n} {level}" for level, n in counts.items() if n)
    unused = [
        str(e.context_index) for e in evaluations if e.relevanceLevel == "high" and not e.wasUsed
    ]
    text = f"The score is {score} of {scale}: passage relevance was {levels}."
    if unused:
        text += f" Highly relevant passages not used by the response: {', '.join(unused)}."
    if analysis.missingContext:
        text += " Missing information: " + "; ".join(analysis.missingContext) + "."
    return text
