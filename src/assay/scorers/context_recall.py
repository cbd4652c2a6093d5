"""Context recall: how much of the ground-truth answer the retrieved context supports.

Parity with ``createContextRecallScorer`` (reference §2.7). The judge splits the ground-truth
answer into atomic claims, then marks each claim "yes" (attributable to the context
passages) or "no"; the score is ``min(1, #yes / #claims) × scale``. It measures the
retriever, not the response: the response is never read.

Judge calls: two (claims, attribution), plus one for an ``llm`` reason.

Deviations from the reference
- The reference's ``contextExtractor`` function becomes the run's ``context`` argument: it
  takes precedence, and the ``context`` param is the fallback. With no context from either
  source the run fails with status "error" before any judge call (the reference would send
  an empty context and score 0).
- A run without a ground truth fails with status "error" before any judge call (the
  reference asks the judge to extract claims from an empty text and then scores 0); a
  missing reference answer is a data problem, not a recall of 0.
- The reason prompt carries the score and the verdicts (with their claims) only; it does
  not repeat the ground truth and the passages.
- A verdict other than "yes" or "no" (after trimming and lower-casing), or a number of
  verdicts that differs from the number of claims, gets one repair turn and then fails the
  run (``status="error"``); the reference counts such labels as unsupported and divides by
  the number of claims whatever number of verdicts came back.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

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
from assay.scorers._lib.verdicts import TRIMMED_LOWERED, one_per
from assay.scoring.context import StepContext
from assay.scoring.registry import register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

INSTRUCTIONS = """\
You assess how well retrieved context passages cover a reference answer. You either break
the reference answer into atomic claims, or decide for each claim whether the passages
support it: "yes" when the passages state it or it follows directly from them, "no"
otherwise. Use only the passages, never your own knowledge."""


class ContextRecallParams(ContextJudgeParams):
    """Params of context-recall."""


class Claims(BaseModel):
    claims: list[str] = Field(description="Atomic, self-contained claims of the reference answer.")


class AttributionVerdict(BaseModel):
    verdict: Annotated[Literal["yes", "no"], TRIMMED_LOWERED] = Field(
        description='"yes" if the passages support the claim, else "no".'
    )
    reason: str = Field(description="One sentence explaining the verdict.")


class AttributionVerdicts(BaseModel):
    verdicts: list[AttributionVerdict] = Field(description="One verdict per claim, in order.")


def ground_truth_text(value: Any) -> str:
    """The ground truth as text: strings as is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _is_yes(verdict: AttributionVerdict) -> bool:
    return verdict.verdict.lower().strip() == "yes"


@register_scorer(
    "context-recall",
    label="Context Recall",
    description=(
        "How much of the ground-truth answer is supported by the retrieved context "
        "(share of ground-truth claims attributable to the passages)."
    ),
    params=ContextRecallParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createContextRecallScorer (context-recall-scorer)",
    preview_notes=(
        "Needs a ground truth (expected output) and context passages (the run's `context` "
        "or the `context` param); the response itself is not read."
    ),
)
def build(params: ContextRecallParams) -> Scorer:
    def context_of(ctx: StepContext) -> list[str]:
        context = run_context(ctx, params.context)
        if not context:
            raise ValueError(
                "No context available for evaluation: pass the run's `context` or set the "
                "`context` param"
            )
        return context

    def claims_prompt(ctx: StepContext) -> str:
        ground_truth = ground_truth_text(ctx.call.ground_truth)
        if not ground_truth.strip():
            raise ValueError(
                "Context recall needs a ground truth (the expected answer); the run has none"
            )
        context_of(ctx)  # fail before the first judge call when the context is missing
        return "\n\n".join(
            [
                "List the atomic claims made by the reference answer: short statements that "
                "can each be checked on their own. Add nothing the text does not say. If it "
                "makes no claims, return an empty list.",
                data_block("reference answer", ground_truth),
            ]
        )

    def attribution_prompt(ctx: StepContext) -> str:
        claims: Claims = ctx.preprocess_result
        return "\n\n".join(
            [
                "For each numbered claim, decide whether the context passages support it. "
                "Give one verdict per claim, in the same order.",
                data_block("claims", numbered(claims.claims)),
                data_block("context passages", numbered(context_of(ctx))),
            ]
        )

    def score(ctx: StepContext) -> float:
        claims: Claims = ctx.preprocess_result
        total = len(claims.claims)
        if total == 0:
            return 0.0
        verdicts: AttributionVerdicts = ctx.analyze_result
        attributed = sum(1 for v in verdicts.verdicts if _is_yes(v))
        return round2(min(1.0, attributed / total) * params.scale)

    def reason_prompt(ctx: StepContext) -> str:
        claims: Claims = ctx.preprocess_result
        verdicts: AttributionVerdicts = ctx.analyze_result
        rows = [
            {"claim": claim, **v.model_dump()}
            for claim, v in zip(claims.claims, verdicts.verdicts, strict=True)
        ]
        return "\n\n".join(
            [
                f"The context recall score is {ctx.score} on a scale of 0 to {params.scale}. "
                "It is the share of the reference answer's claims that the retrieved context "
                "supports.",
                data_block("claim verdicts", json.dumps(rows, ensure_ascii=False)),
                "In two or three plain sentences, explain why the score is what it is, naming "
                "the unsupported claims if any. Answer in plain text, not JSON.",
            ]
        )

    def reason_template(ctx: StepContext) -> str:
        claims: Claims = ctx.preprocess_result
        verdicts: AttributionVerdicts = ctx.analyze_result
        return template_reason(claims.claims, verdicts.verdicts, ctx.score, params.scale)

    scorer = (
        Scorer(
            "context-recall",
            description="Context recall (ground-truth claims supported by the context)",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .preprocess(
            judge_step(
                claims_prompt,
                Claims,
                description="Extract atomic claims from the ground truth",
                version="1",
            )
        )
        .analyze(
            judge_step(
                attribution_prompt,
                AttributionVerdicts,
                description="Judge whether the context supports each claim",
                version="1",
                check=one_per(lambda ctx: ctx.preprocess_result.claims, "verdicts", "claim"),
            )
        )
        .score(score)
    )
    return with_reason(
        scorer,
        params.reason,
        prompt=reason_prompt,
        template=reason_template,
        description="Explain the recall score",
    )


def template_reason(
    claims: list[str], verdicts: list[AttributionVerdict], score: Any, scale: float
) -> str:
    """A reason written from the verdicts (one per claim), without a model call."""
    if not claims:
        return f"The score is {score} of {scale}: the ground truth yielded no claims to check."
    supported = sum(1 for v in verdicts if _is_yes(v))
    missing = [claim for claim, v in zip(claims, verdicts, strict=True) if not _is_yes(v)]
    text = (
        f"The score is {score} of {scale}: the context supports {supported} "
        f"of the {len(claims)} claims of the ground truth."
    )
    if missing:
        text += " Not supported: " + "; ".join(missing) + "."
    return text
