"""Context recall: how much of the ground-truth answer the retrieved context supports.

Parity with ``createContextRecallScorer`` (reference §2.7). The judge splits the ground-truth
answer into atomic claims, then marks each claim "yes" (attributable to the context
passages) or "no"; the score is ``min(1, #yes / #claims) × scale``. It measures the
retriever, not the response: the response is never read. Judge calls: two, plus one for an
``llm`` reason.

Deviations from the reference
- The reference's ``contextExtractor`` becomes the run's ``context`` argument (the
  ``context`` param is the fallback). With no context, or no ground truth, the run fails
  before any judge call (the reference would judge an empty text and score 0); a missing
  reference answer is a data problem, not a recall of 0.
- The LLM reason gets the score and the verdicts (with their claims) only.
- A verdict other than "yes" or "no" (after trimming and lower-casing), or a verdict count
  that differs from the claim count, gets one repair turn and then fails the run.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import share
from assay.scorers._lib.judge_common import ContextJudgeParams, numbered
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Prompt,
    View,
    as_json,
    needs_context,
    needs_ground_truth,
    one_per_item,
)
from assay.scorers._lib.verdicts import TRIMMED_LOWERED


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


class ContextRecall(JudgeScorer[ContextRecallParams]):
    """How much of the ground-truth answer is supported by the retrieved context (share of
    ground-truth claims attributable to the passages)."""

    type_id, label, params_model = "context-recall", "Context Recall", ContextRecallParams
    reference = "createContextRecallScorer (context-recall-scorer)"
    preview_notes = (
        "Needs a ground truth (expected output) and context passages (the run's `context` "
        "or the `context` param); the response itself is not read."
    )
    instructions = """\
You assess how well retrieved context passages cover a reference answer. You either break
the reference answer into atomic claims, or decide for each claim whether the passages
support it: "yes" when the passages state it or it follows directly from them, "no"
otherwise. Use only the passages, never your own knowledge."""
    needs = (
        needs_ground_truth("Context recall needs a ground truth (the expected answer)"),
        needs_context(
            "No context available for evaluation: pass the run's `context` or set the "
            "`context` param"
        ),
    )
    meaning = "the share of the reference answer's claims that the retrieved context supports"
    preprocess = Prompt(
        "List the atomic claims made by the reference answer: short statements that "
        "can each be checked on their own. Add nothing the text does not say. If it "
        "makes no claims, return an empty list.",
        Claims,
        inputs={"reference answer": lambda j: as_json(j.ctx.call.ground_truth)},
        description="Extract atomic claims from the ground truth",
    )
    analyze = Prompt(
        "For each numbered claim, decide whether the context passages support it. "
        "Give one verdict per claim, in the same order.",
        AttributionVerdicts,
        inputs={
            "claims": lambda j: numbered(j.pre.claims),
            "context passages": lambda j: numbered(j.context),
        },
        check=one_per_item(lambda j: j.pre.claims, "verdicts", "claim"),
        description="Judge whether the context supports each claim",
    )

    def score(self, j: View[ContextRecallParams]) -> float:
        return share(j.analysis.verdicts, "verdict", "yes", of=len(j.pre.claims))

    def findings(self, j: View[ContextRecallParams]) -> dict[str, Any]:
        pairs = zip(j.pre.claims, j.analysis.verdicts, strict=True)
        return {"claim verdicts": [{"claim": c, **v.model_dump()} for c, v in pairs]}

    def reason(self, j: View[ContextRecallParams]) -> str:
        claims, verdicts, scale = j.pre.claims, j.analysis.verdicts, j.params.scale
        if not claims:
            return (
                f"The score is {j.score} of {scale}: the ground truth yielded no claims to check."
            )
        pairs = list(zip(claims, verdicts, strict=True))
        missing = [c for c, v in pairs if v.verdict != "yes"]
        text = (
            f"The score is {j.score} of {scale}: the context supports "
            f"{len(pairs) - len(missing)} of the {len(claims)} claims of the ground truth."
        )
        return text + (" Not supported: " + "; ".join(missing) + "." if missing else "")
