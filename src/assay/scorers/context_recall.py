"""Context recall: how much of the ground-truth answer the retrieved context supports.

Formula and deviations from the reference: docs/scorers.md, "context-recall"."""

from __future__ import annotations

from typing import Any

from assay.scorers._lib.claim_attribution import AttributionVerdicts, Claims
from assay.scorers._lib.formulas import share
from assay.scorers._lib.judge_common import ContextJudgeParams, numbered
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Prompt,
    View,
    as_json,
    listed,
    needs_context,
    needs_ground_truth,
    one_per_item,
)
from assay.scoring.registry import register_scorer


class ContextRecallParams(ContextJudgeParams):
    """Params of context-recall."""


ContextRecallView = View[ContextRecallParams, Claims, AttributionVerdicts]
"""What ContextRecall's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "context-recall",
    label="Context Recall",
    params=ContextRecallParams,
    reference="createContextRecallScorer (context-recall-scorer)",
    preview_notes=(
        "Needs a ground truth (expected output) and context passages (the run's `context` "
        "or the `context` param); the response itself is not read."
    ),
)
class ContextRecall(JudgeScorer[ContextRecallParams, Claims, AttributionVerdicts]):
    """How much of the ground-truth answer is supported by the retrieved context (share of
    ground-truth claims attributable to the passages)."""

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

    def score(self, j: ContextRecallView) -> float:
        return share(j.analysis.verdicts, "verdict", "yes", of=len(j.pre.claims))

    def findings(self, j: ContextRecallView) -> dict[str, Any]:
        pairs = zip(j.pre.claims, j.analysis.verdicts, strict=True)
        return {"claim verdicts": [{"claim": c, **v.model_dump()} for c, v in pairs]}

    def reason(self, j: ContextRecallView) -> str:
        claims, verdicts = j.pre.claims, j.analysis.verdicts
        if not claims:
            return f"{j.headline}: the ground truth yielded no claims to check."
        pairs = list(zip(claims, verdicts, strict=True))
        missing = [c for c, v in pairs if v.verdict != "yes"]
        text = (
            f"{j.headline}: the context supports "
            f"{len(pairs) - len(missing)} of the {len(claims)} claims of the ground truth."
        )
        return text + listed("Not supported", missing)
