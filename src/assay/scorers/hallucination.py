"""Hallucination: the share of the response's claims that the context does not back.

Reference structure (``createHallucinationScorer``): a judge call extracts the claims from
the response (it never sees the context), a second call marks each claim ``"yes"`` (a
hallucination: it contradicts the context, or the context does not support it, speculative
claims about facts absent from the context included) or ``"no"`` (supported; approximate
numbers and dates and omissions are fine). Score ``round2(#yes / #verdicts × scale)``;
lower is better. Context: as for faithfulness (run, param, legacy tool results).

Deviations from the reference
- No context at all is an error before any judge call. The reference defaults to an empty
  context, where every claim is a "hallucination" and the score is the maximum.
- ``getContext`` (a function option) is not a param: the context comes from the run's
  ``context``, then the ``context`` param, then the output's tool results.
- The LLM reason gets the verdicts and score only (the shared reason prompt).
- A verdict other than exactly "yes" or "no", or a verdict count that differs from the
  claim count, gets one repair turn and then fails the run (``status="error"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.claims import ClaimsJudge, ClaimsParams, ResponseClaims
from assay.scorers._lib.formulas import share
from assay.scorers._lib.judge_scorer import View, fmt, tally


class HallucinationParams(ClaimsParams):
    pass  # no docstring: the params JSON Schema has no description, as before


HallucinationClaims = ResponseClaims  # the claim-extraction answer (shared)


class HallucinationVerdict(BaseModel):
    statement: str = Field(description="The claim judged.")
    verdict: Literal["yes", "no"] = Field(description='"yes" (hallucination) or "no" (supported).')
    reason: str = Field(description="One short sentence.")


class HallucinationVerdicts(BaseModel):
    verdicts: list[HallucinationVerdict] = Field(description="One verdict per claim, in order.")


class Hallucination(ClaimsJudge[HallucinationParams]):
    """Share of the response's claims that contradict the context or are not supported by
    it (LLM judge: claim extraction, then a verdict per claim). Lower is better."""

    type_id, label, params_model = "hallucination", "Hallucination", HallucinationParams
    higher_is_better = False
    reference = "createHallucinationScorer (hallucination-scorer)"
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

    def score(self, j: View[HallucinationParams]) -> float:
        return share(j.analysis.verdicts, "verdict", "yes")

    def reason(self, j: View[HallucinationParams]) -> str:
        verdicts = j.analysis.verdicts
        if not verdicts:
            return f"The score is {fmt(j.score)} because the response makes no claims to check."
        bad = [f'"{v.statement}" ({v.reason})' for v in verdicts if v.verdict == "yes"]
        return tally(j.score, len(bad), len(verdicts), "claims are not backed by the context", bad)
