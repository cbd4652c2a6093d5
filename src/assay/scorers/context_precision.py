"""Context precision: were the passages that helped the response ranked first?

Formula and deviations from the reference: docs/scorers.md, "context-precision"."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import mean_average_precision
from assay.scorers._lib.judge_common import ContextJudgeParams, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, View, each_key_once, needs_context
from assay.scorers._lib.verdicts import TRIMMED_LOWERED
from assay.scoring.registry import register_scorer


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


def useful_in_order(verdicts: list[ContextVerdict]) -> list[bool]:
    return [v.verdict == "yes" for v in sorted(verdicts, key=lambda v: v.context_index)]


ContextPrecisionView = View[ContextPrecisionParams, None, ContextVerdicts]
"""What ContextPrecision's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "context-precision",
    label="Context Precision",
    params=ContextPrecisionParams,
    reference="createContextPrecisionScorer (context-precision-scorer)",
    preview_notes=(
        "Needs context passages: the run's `context`, or the `context` param. Passage order "
        "matters: useful passages placed late lower the score."
    ),
)
class ContextPrecision(JudgeScorer[ContextPrecisionParams, None, ContextVerdicts]):
    """Whether the retrieved context passages that were useful for the response are ranked
    first (mean average precision of per-passage judge verdicts)."""

    instructions = """\
You assess retrieved context passages for a question-answering system. For each passage you
decide whether it was useful for producing the given response: "yes" when the response uses,
or clearly depends on, information in the passage; "no" when the passage is irrelevant or
adds nothing the response needed. Judge every passage on its own, in the order given."""
    needs = (
        needs_context(
            "No context available for evaluation: pass the run's `context` or set the "
            "`context` param"
        ),
    )
    meaning = (
        "the mean average precision of the passage verdicts in passage order: useful passages "
        "ranked early raise it, useful passages ranked after useless ones lower it"
    )
    analyze = Prompt(
        "Decide for each numbered context passage whether it was useful for producing "
        "the response to the question. Give one verdict per passage, with its index.",
        ContextVerdicts,
        inputs={
            "question": lambda j: j.input,
            "response": lambda j: j.output,
            "context passages": lambda j: numbered(j.context),
        },
        check=each_key_once(
            lambda j: range(len(j.context)), "verdicts", "context_index", "passage"
        ),
        description="Judge whether each context passage was useful for the response",
    )

    def score(self, j: ContextPrecisionView) -> float:
        return mean_average_precision(useful_in_order(j.analysis.verdicts))

    def reason(self, j: ContextPrecisionView) -> str:
        useful = useful_in_order(j.analysis.verdicts)
        head = f"The score is {j.score} of {j.params.scale}:"
        indexes = sorted(v.context_index for v in j.analysis.verdicts if v.verdict == "yes")
        if not useful:
            return f"{head} the judge returned no passage verdicts."
        if not indexes:
            return f"{head} none of the {len(useful)} context passages was useful for the response."
        ranking = (
            "all useful passages come first"
            if all(useful[: len(indexes)])
            else "some useful passages are ranked after useless ones"
        )
        return (
            f"{head} {len(indexes)} of {len(useful)} context passages were useful "
            f"(passages {', '.join(map(str, indexes))}), and {ranking}."
        )
