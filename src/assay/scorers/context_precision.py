"""Context precision: were the passages that helped the response ranked first?

Parity with ``createContextPrecisionScorer`` (reference §2.6). The judge marks each
retrieved passage "yes" (it was useful for producing the response) or "no"; the score is
the mean average precision of those verdicts in passage order, so a useful passage ranked
behind useless ones costs more than one ranked first. Example: ``[yes, no, yes]`` →
``(1/1 + 2/3) / 2 = 0.83``. Like the reference, the response (not the ground truth) is what
the passages are judged against.

Judge calls: one (analyze), plus one for an ``llm`` reason.

Deviations from the reference
- The reference's ``contextExtractor`` function becomes the run's ``context`` argument: it
  takes precedence, and the ``context`` param is the fallback for runs without one. The
  reference's factory error "Either context or contextExtractor is required" cannot be
  raised when the scorer is built (a run may bring its context), so a run with no context
  from either source fails with status "error" before any judge call ("No context available
  for evaluation", which the reference raises too when its extractor returns nothing).
- The reason prompt carries the score and the verdicts only; it does not repeat the
  question, response and passages (the verdicts already name the passages).
- A verdict other than "yes" or "no" (after trimming and lower-casing), or verdicts that are
  not exactly one per passage (``context_index`` 0..n-1, each once), get one repair turn and
  then fail the run (``status="error"``); the reference counts such labels as not useful and
  averages whatever verdicts came back.
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
from assay.scorers._lib.verdicts import TRIMMED_LOWERED, each_once
from assay.scoring.context import StepContext
from assay.scoring.registry import register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

INSTRUCTIONS = """\
You assess retrieved context passages for a question-answering system. For each passage you
decide whether it was useful for producing the given response: "yes" when the response uses,
or clearly depends on, information in the passage; "no" when the passage is irrelevant or
adds nothing the response needed. Judge every passage on its own, in the order given."""


class ContextPrecisionParams(ContextJudgeParams):
    """Params of context-precision."""


class ContextVerdict(BaseModel):
    context_index: int = Field(description="Index of the passage, as numbered in the prompt.")
    verdict: Annotated[Literal["yes", "no"], TRIMMED_LOWERED] = Field(
        description='"yes" if the passage was useful for the response, else "no".'
    )
    reason: str = Field(description="One sentence explaining the verdict.")


class ContextVerdicts(BaseModel):
    verdicts: list[ContextVerdict] = Field(description="One verdict per passage, in order.")


def mean_average_precision(verdicts: list[ContextVerdict]) -> tuple[float, int]:
    """MAP of the verdicts ordered by ``context_index``: ``(map, relevant_count)``."""
    relevant = 0
    precision_sum = 0.0
    for position, verdict in enumerate(sorted(verdicts, key=lambda v: v.context_index)):
        if verdict.verdict.lower().strip() == "yes":
            relevant += 1
            precision_sum += relevant / (position + 1)
    return (precision_sum / relevant if relevant else 0.0), relevant


@register_scorer(
    "context-precision",
    label="Context Precision",
    description=(
        "Whether the retrieved context passages that were useful for the response are ranked "
        "first (mean average precision of per-passage judge verdicts)."
    ),
    params=ContextPrecisionParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createContextPrecisionScorer (context-precision-scorer)",
    preview_notes=(
        "Needs context passages: the run's `context`, or the `context` param. Passage order "
        "matters: useful passages placed late lower the score."
    ),
)
def build(params: ContextPrecisionParams) -> Scorer:
    def analyze_prompt(ctx: StepContext) -> str:
        context = run_context(ctx, params.context)
        if not context:
            raise ValueError(
                "No context available for evaluation: pass the run's `context` or set the "
                "`context` param"
            )
        return "\n\n".join(
            [
                "Decide for each numbered context passage whether it was useful for producing "
                "the response to the question. Give one verdict per passage, with its index.",
                data_block("question", ctx.input_text),
                data_block("response", ctx.output_text),
                data_block("context passages", numbered(context)),
            ]
        )

    def score(ctx: StepContext) -> float:
        analysis: ContextVerdicts = ctx.analyze_result
        if not analysis.verdicts:
            return 0.0
        value, relevant = mean_average_precision(analysis.verdicts)
        if relevant == 0:
            return 0.0
        return round2(value * params.scale)

    def reason_prompt(ctx: StepContext) -> str:
        analysis: ContextVerdicts = ctx.analyze_result
        verdicts = [v.model_dump() for v in analysis.verdicts]
        return "\n\n".join(
            [
                f"The context precision score is {ctx.score} on a scale of 0 to {params.scale}. "
                "It is the mean average precision of the passage verdicts below, in passage "
                "order: useful passages ranked early raise it, useful passages ranked after "
                "useless ones lower it.",
                data_block("verdicts", json.dumps(verdicts, ensure_ascii=False)),
                "In two or three plain sentences, explain why the score is what it is. "
                "Answer in plain text, not JSON.",
            ]
        )

    def reason_template(ctx: StepContext) -> str:
        analysis: ContextVerdicts = ctx.analyze_result
        return template_reason(analysis.verdicts, ctx.score, params.scale)

    scorer = (
        Scorer(
            "context-precision",
            description="Context precision (mean average precision)",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .analyze(
            judge_step(
                analyze_prompt,
                ContextVerdicts,
                description="Judge whether each context passage was useful for the response",
                version="1",
                check=each_once(
                    lambda ctx: range(len(run_context(ctx, params.context))),
                    "verdicts",
                    "context_index",
                    "passage",
                ),
            )
        )
        .score(score)
    )
    return with_reason(
        scorer,
        params.reason,
        prompt=reason_prompt,
        template=reason_template,
        description="Explain the precision score",
    )


def template_reason(verdicts: list[ContextVerdict], score: Any, scale: float) -> str:
    """A reason written from the verdicts, without a model call."""
    ordered = sorted(verdicts, key=lambda v: v.context_index)
    useful = [v.context_index for v in ordered if v.verdict.lower().strip() == "yes"]
    if not ordered:
        return f"The score is {score} of {scale}: the judge returned no passage verdicts."
    if not useful:
        return (
            f"The score is {score} of {scale}: none of the {len(ordered)} context passages "
            "was useful for the response."
        )
    first_useless = next(
        (i for i, v in enumerate(ordered) if v.verdict.lower().strip() != "yes"), None
    )
    ranking = (
        "all useful passages come first"
        if first_useless is None or first_useless >= len(useful)
        else "some useful passages are ranked after useless ones"
    )
    listed = ", ".join(str(i) for i in useful)
    return (
        f"The score is {score} of {scale}: {len(useful)} of {len(ordered)} context passages "
        f"were useful (passages {listed}), and {ranking}."
    )
