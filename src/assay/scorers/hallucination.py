"""Hallucination: the share of the response's claims that the context does not back.

Reference structure (``createHallucinationScorer``): a judge call extracts the claims from
the response (it never sees the context), a second call marks each claim ``"yes"`` (a
hallucination: it contradicts the context, or the context does not support it, speculative
claims about facts absent from the context included) or ``"no"`` (supported; approximate
numbers and dates and omissions are fine). Score ``round2(#yes / #verdicts × scale)``;
lower is better.

Context, first that has passages: the run's ``context`` argument, the ``context`` param,
then the JSON of the legacy tool-invocation results in the output (the faithfulness rule).

Deviations from the reference
- No context at all is an error (``status="error"``, before any judge call). The reference
  defaults to an empty context, where every claim is a "hallucination" and the score is the
  maximum whatever the response says.
- ``getContext`` (a function option) is not a param: the context comes from the run's
  ``context`` argument, falling back to the ``context`` param and then to the tool results
  of the output (the reference has no tool-result fallback for this scorer).
- The LLM reason prompt gets the verdicts and score only, not the input, output and context.
- A verdict other than exactly "yes" or "no", or a number of verdicts that differs from the
  number of claims, gets one repair turn and then fails the run (``status="error"``); the
  reference counts any such label as supported and scores whatever verdicts came back.
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
    "You detect hallucinations: claims in a response that the given context does not "
    "back. Judge only against the context, never against your own knowledge."
)


class HallucinationParams(ReasonedJudgeParams):
    context: list[str] | None = Field(
        default=None,
        description="Context passages, used when the run has no context of its own.",
    )


class HallucinationClaims(BaseModel):
    claims: list[str] = Field(description="The response's claims, in order; [] if none.")


class HallucinationVerdict(BaseModel):
    statement: str = Field(description="The claim judged.")
    verdict: Literal["yes", "no"] = Field(description='"yes" (hallucination) or "no" (supported).')
    reason: str = Field(description="One short sentence.")


class HallucinationVerdicts(BaseModel):
    verdicts: list[HallucinationVerdict] = Field(description="One verdict per claim, in order.")


@register_scorer(
    "hallucination",
    label="Hallucination",
    description=(
        "Share of the response's claims that contradict the context or are not supported by "
        "it (LLM judge: claim extraction, then a verdict per claim). Lower is better."
    ),
    params=HallucinationParams,
    kind="judge",
    higher_is_better=False,
    score_range=(0.0, 1.0),
    reference="createHallucinationScorer (hallucination-scorer)",
    preview_notes=(
        "Needs context: the run's context, the 'context' param, or tool results in the "
        "output. 2 judge calls, 3 with reason='llm'."
    ),
)
def build(params: HallucinationParams) -> Scorer:
    def preprocess_prompt(ctx: StepContext) -> str:
        resolve_context(ctx, params.context, "hallucination")  # fail before any judge call
        return claims_prompt(ctx.output_text)

    def analyze_prompt(ctx: StepContext) -> str:
        passages = resolve_context(ctx, params.context, "hallucination")
        claims: list[str] = ctx.preprocess_result.claims
        return (
            'Give one verdict per claim: "yes" if it is a hallucination (the context '
            "contradicts it or does not support it, speculative claims about facts absent "
            'from the context included), "no" if the context supports it (approximate '
            "numbers or dates and leaving things out are fine).\n\n"
            f"{data_block('context', numbered(passages))}\n\n"
            f"{data_block('claims', numbered(claims))}"
        )

    def score(ctx: StepContext) -> float:
        verdicts: list[HallucinationVerdict] = ctx.analyze_result.verdicts
        if not verdicts:
            return 0.0
        hallucinated = sum(1 for v in verdicts if v.verdict == "yes")
        return round2(hallucinated / len(verdicts) * params.scale)

    def template_reason(ctx: StepContext) -> str:
        verdicts: list[HallucinationVerdict] = ctx.analyze_result.verdicts
        value = fmt(ctx.score or 0.0)
        if not verdicts:
            return f"The score is {value} because the response makes no claims to check."
        bad = [v for v in verdicts if v.verdict == "yes"]
        text = (
            f"The score is {value} because {len(bad)} of {len(verdicts)} claims are not "
            "backed by the context"
        )
        if bad:
            text += ": " + "; ".join(f'"{v.statement}" ({v.reason})' for v in bad)
        return text + "."

    def reason_prompt(ctx: StepContext) -> str:
        verdicts: list[HallucinationVerdict] = ctx.analyze_result.verdicts
        value = fmt(ctx.score or 0.0)
        return (
            f"The hallucination score is {value} on a 0-{fmt(params.scale)} scale: the share "
            "of claims the context contradicts or does not support. In at most two sentences, "
            f'explain it, starting with "The score is {value} because".\n\n'
            + data_block("verdicts", [v.model_dump() for v in verdicts])
        )

    scorer = (
        Scorer(
            "hallucination",
            description="Hallucination against the context",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .preprocess(
            judge_step(
                preprocess_prompt,
                HallucinationClaims,
                description="Extract the response's claims",
                version="1",
            )
        )
        .analyze(
            judge_step(
                analyze_prompt,
                HallucinationVerdicts,
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
