"""Faithfulness: the share of the response's claims that the context supports.

Two judge calls, as in the reference (``createFaithfulnessScorer``): the first extracts the
claims from the response (it never sees the context), the second gives each claim a verdict
against the context — ``"yes"`` supported, ``"no"`` contradicted, ``"unsure"`` not settled
by it. The score is ``round2(#yes / #verdicts × scale)``; ``"unsure"`` counts as unsupported.

Prompts are lean on purpose: the context goes only to the verdict step, the question goes
nowhere (claims are judged against the context, not the question), and with
``reason="template"`` the reason is written from the verdicts without a third call. On an
item with a question, a three-sentence answer and three ~60-word passages the two calls send
well under 1,100 prompt tokens in total (see ``tests/scorers/test_faithfulness.py``).

Context, first that has passages: the run's ``context`` argument, the ``context`` param,
then the reference's rule — the JSON of every legacy ``content.toolInvocations`` result
(``state == "result"``) on the output's assistant messages.

Deviations from the reference
- No context at all is an error (``status="error"``, before any judge call); the reference
  judges the claims against an empty context and returns 0, a number that measures nothing.
- The context may come from the run's ``context`` argument (the reference only has the
  ``context`` option and the tool-result fallback).
- The LLM reason prompt gets the claims, verdicts and score only, not the input, output and
  context (the verdict reasons already say what the context does or does not support).
- A verdict other than exactly "yes", "no" or "unsure", or a number of verdicts that differs
  from the number of claims, gets one repair turn and then fails the run (``status="error"``);
  the reference counts any such label as unsupported and scores whatever verdicts came back.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assay.rounding import round2
from assay.scorers._lib.claims import claims_prompt, fmt, resolve_context
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
    "You check whether a response is faithful to the context it was given. "
    "Judge claims only against the context, never against your own knowledge."
)


class FaithfulnessParams(ReasonedJudgeParams):
    context: list[str] | None = Field(
        default=None,
        description="Context passages, used when the run has no context of its own.",
    )


class FaithfulnessClaims(BaseModel):
    claims: list[str] = Field(description="The response's claims, in order; [] if none.")


class FaithfulnessVerdict(BaseModel):
    verdict: Literal["yes", "no", "unsure"] = Field(description='"yes", "no" or "unsure".')
    reason: str = Field(description="One short sentence.")


class FaithfulnessVerdicts(BaseModel):
    verdicts: list[FaithfulnessVerdict] = Field(description="One verdict per claim, in order.")


@register_scorer(
    "faithfulness",
    label="Faithfulness",
    description=(
        "Share of the response's claims that the context supports (LLM judge: claim "
        "extraction, then a yes/no/unsure verdict per claim against the context)."
    ),
    params=FaithfulnessParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createFaithfulnessScorer (faithfulness-scorer)",
    preview_notes=(
        "Needs context: the run's context, the 'context' param, or tool results in the "
        "output. 2 judge calls, 3 with reason='llm'."
    ),
)
def build(params: FaithfulnessParams) -> Scorer:
    def preprocess_prompt(ctx: StepContext) -> str:
        resolve_context(ctx, params.context, "faithfulness")  # fail before any judge call
        return claims_prompt(ctx.output_text)

    def analyze_prompt(ctx: StepContext) -> str:
        passages = resolve_context(ctx, params.context, "faithfulness")
        claims: list[str] = ctx.preprocess_result.claims
        return (
            'Give one verdict per claim, judged only against the context: "yes" if the '
            'context supports it, "no" if the context contradicts it, "unsure" if the '
            "context does not settle it or the claim is speculative.\n\n"
            f"{data_block('context', numbered(passages))}\n\n"
            f"{data_block('claims', numbered(claims))}"
        )

    def score(ctx: StepContext) -> float:
        analysis = ctx.analyze_result
        if analysis is None:
            raise ValueError("faithfulness: the analyze step produced no verdicts")
        verdicts: list[FaithfulnessVerdict] = analysis.verdicts
        if not verdicts:
            return 0.0
        supported = sum(1 for v in verdicts if v.verdict == "yes")
        return round2(supported / len(verdicts) * params.scale)

    def template_reason(ctx: StepContext) -> str:
        claims: list[str] = ctx.preprocess_result.claims
        verdicts: list[FaithfulnessVerdict] = ctx.analyze_result.verdicts
        value = fmt(ctx.score or 0.0)
        if not verdicts:
            return f"The score is {value} because the response makes no claims to check."
        supported = sum(1 for v in verdicts if v.verdict == "yes")
        text = (
            f"The score is {value} because {supported} of {len(verdicts)} claims are "
            "supported by the context"
        )
        contradicted = [i for i, v in enumerate(verdicts) if v.verdict == "no"]
        unsettled = [i for i, v in enumerate(verdicts) if v.verdict not in ("yes", "no")]
        for label, indexes in (("contradicted", contradicted), ("not supported", unsettled)):
            if indexes:
                listed = "; ".join(f'"{claims[i]}" ({verdicts[i].reason})' for i in indexes)
                text += f"; {label}: {listed}"
        return text + "."

    def reason_prompt(ctx: StepContext) -> str:
        claims: list[str] = ctx.preprocess_result.claims
        verdicts: list[FaithfulnessVerdict] = ctx.analyze_result.verdicts
        rows = [
            {"claim": claim, "verdict": v.verdict, "reason": v.reason}
            for claim, v in zip(claims, verdicts, strict=True)
        ]
        return (
            f"The faithfulness score is {fmt(ctx.score or 0.0)} on a 0-{fmt(params.scale)} "
            "scale: the share of claims the context supports. In at most two sentences, "
            f'explain it, starting with "The score is {fmt(ctx.score or 0.0)} because".\n\n'
            + data_block("verdicts", rows)
        )

    scorer = (
        Scorer(
            "faithfulness",
            description="Faithfulness to the context",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .preprocess(
            judge_step(
                preprocess_prompt,
                FaithfulnessClaims,
                description="Extract the response's claims",
                version="1",
            )
        )
        .analyze(
            judge_step(
                analyze_prompt,
                FaithfulnessVerdicts,
                description="Judge each claim against the context",
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
        template=template_reason,
        description="Explain the score",
    )
