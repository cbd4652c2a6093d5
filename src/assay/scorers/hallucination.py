"""Hallucination: the share of the response's claims that the context does not back.

Formula, context and deviations from the reference: docs/scorers.md, "hallucination"."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.claims import ClaimsJudge, ClaimsParams, ResponseClaims
from assay.scorers._lib.formulas import share
from assay.scorers._lib.judge_scorer import View, fmt, tally
from assay.scoring.registry import register_scorer


class HallucinationParams(ClaimsParams):
    pass  # no docstring: the params JSON Schema has no description, as before


HallucinationClaims = ResponseClaims  # the claim-extraction answer (shared)


class HallucinationVerdict(BaseModel):
    statement: str = Field(description="The claim judged.")
    verdict: Literal["yes", "no"] = Field(description='"yes" (hallucination) or "no" (supported).')
    reason: str = Field(description="One short sentence.")


class HallucinationVerdicts(BaseModel):
    verdicts: list[HallucinationVerdict] = Field(description="One verdict per claim, in order.")


HallucinationView = View[HallucinationParams, ResponseClaims, HallucinationVerdicts]
"""What Hallucination's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "hallucination",
    label="Hallucination",
    params=HallucinationParams,
    higher_is_better=False,
    reference="createHallucinationScorer (hallucination-scorer)",
)
class Hallucination(ClaimsJudge[HallucinationParams, HallucinationVerdicts]):
    """Share of the response's claims that contradict the context or are not supported by
    it (LLM judge: claim extraction, then a verdict per claim). Lower is better."""

    instructions = (
        "You detect hallucinations: claims in a response that the given context does not "
        "back. Judge only against the context, never against your own knowledge."
    )
    meaning = "the share of claims the context contradicts or does not support"
    analyze = ClaimsJudge.verdicts_prompt(
        'Give one verdict per claim: "yes" if it is a hallucination (the context '
        "contradicts it or does not support it, speculative claims about facts absent "
        'from the context included), "no" if the context supports it (approximate '
        "numbers or dates and leaving things out are fine).",
        HallucinationVerdicts,
    )

    def score(self, j: HallucinationView) -> float:
        return share(j.analysis.verdicts, "verdict", "yes")

    def reason(self, j: HallucinationView) -> str:
        verdicts = j.analysis.verdicts
        if not verdicts:
            return f"The score is {fmt(j.score)} because the response makes no claims to check."
        bad = [f'"{v.statement}" ({v.reason})' for v in verdicts if v.verdict == "yes"]
        return tally(j.score, len(bad), len(verdicts), "claims are not backed by the context", bad)
