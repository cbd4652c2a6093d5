"""Faithfulness: the share of the response's claims that the context supports.

Formula, context and deviations from the reference: docs/scorers.md, "faithfulness"."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.claims import ClaimsJudge, ClaimsParams, ResponseClaims
from assay.scorers._lib.formulas import count, share
from assay.scorers._lib.judge_scorer import View, fmt, tally
from assay.scoring.registry import register_scorer


class FaithfulnessParams(ClaimsParams):
    pass  # no docstring: the params JSON Schema has no description, as before


FaithfulnessClaims = ResponseClaims  # the claim-extraction answer (shared)


class FaithfulnessVerdict(BaseModel):
    verdict: Literal["yes", "no", "unsure"] = Field(description='"yes", "no" or "unsure".')
    reason: str = Field(description="One short sentence.")


class FaithfulnessVerdicts(BaseModel):
    verdicts: list[FaithfulnessVerdict] = Field(description="One verdict per claim, in order.")


FaithfulnessView = View[FaithfulnessParams, ResponseClaims, FaithfulnessVerdicts]
"""What Faithfulness's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "faithfulness",
    label="Faithfulness",
    params=FaithfulnessParams,
    reference="createFaithfulnessScorer (faithfulness-scorer)",
)
class Faithfulness(ClaimsJudge[FaithfulnessParams, FaithfulnessVerdicts]):
    """Share of the response's claims that the context supports (LLM judge: claim
    extraction, then a yes/no/unsure verdict per claim against the context)."""

    instructions = (
        "You check whether a response is faithful to the context it was given. "
        "Judge claims only against the context, never against your own knowledge."
    )
    meaning = "the share of claims the context supports"
    analyze = ClaimsJudge.verdicts_prompt(
        'Give one verdict per claim, judged only against the context: "yes" if the '
        'context supports it, "no" if the context contradicts it, "unsure" if the '
        "context does not settle it or the claim is speculative.",
        FaithfulnessVerdicts,
    )

    def score(self, j: FaithfulnessView) -> float:
        return share(j.analysis.verdicts, "verdict", "yes")

    def findings(self, j: FaithfulnessView) -> dict[str, Any]:
        pairs = zip(j.pre.claims, j.analysis.verdicts, strict=True)
        return {"verdicts": [{"claim": c, **v.model_dump()} for c, v in pairs]}

    def reason(self, j: FaithfulnessView) -> str:
        verdicts = j.analysis.verdicts
        if not verdicts:
            return f"The score is {fmt(j.score)} because the response makes no claims to check."
        supported = count(verdicts, "verdict", "yes")
        text = tally(j.score, supported, len(verdicts), "claims are supported by the context")
        pairs = list(zip(j.pre.claims, verdicts, strict=True))
        for label, kind in (("contradicted", "no"), ("not supported", "unsure")):
            listed = [f'"{c}" ({v.reason})' for c, v in pairs if v.verdict == kind]
            if listed:
                text = text[:-1] + f"; {label}: " + "; ".join(listed) + "."
        return text
