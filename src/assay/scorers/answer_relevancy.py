"""Answer relevancy: how much of the response addresses the user's input.

Formula and deviations from the reference: docs/scorers.md, "answer-relevancy"."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import count, weighted_share
from assay.scorers._lib.judge_common import ReasonedJudgeParams, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, View, fmt, one_per_item
from assay.scorers._lib.verdicts import TRIMMED_LOWERED
from assay.scoring.registry import register_scorer


class AnswerRelevancyParams(ReasonedJudgeParams):
    uncertainty_weight: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="How much an 'unsure' (partly relevant) statement counts, 0..1.",
    )


class RelevancyStatements(BaseModel):
    statements: list[str] = Field(description="The response's statements, in order; [] if none.")


class RelevancyResult(BaseModel):
    result: Annotated[Literal["yes", "unsure", "no"], TRIMMED_LOWERED] = Field(
        description='"yes", "unsure" or "no".'
    )
    reason: str = Field(description="One short sentence.")


class RelevancyResults(BaseModel):
    results: list[RelevancyResult] = Field(description="One result per statement, in order.")


AnswerRelevancyView = View[AnswerRelevancyParams, RelevancyStatements, RelevancyResults]
"""What AnswerRelevancy's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "answer-relevancy",
    label="Answer Relevancy",
    params=AnswerRelevancyParams,
    reference="createAnswerRelevancyScorer (answer-relevancy-scorer)",
    preview_notes="2 judge calls, 3 with reason='llm'. 'unsure' counts uncertainty_weight.",
)
class AnswerRelevancy(JudgeScorer[AnswerRelevancyParams, RelevancyStatements, RelevancyResults]):
    """How much of the response addresses the user's input (LLM judge: split into
    statements, then a yes/unsure/no relevance verdict per statement)."""

    instructions = (
        "You judge how relevant a response is to the user's input. Judge relevance, not "
        "correctness; partly relevant statements count as partial. An empty response or an "
        "error message is not relevant."
    )
    meaning = "how much of the response addresses the input ('unsure' counts partly)"
    preprocess = Prompt(
        "Split the response into its meaningful statements. Do not over-split, but split "
        "a compound statement joined by 'and' into its parts. A single word or an error "
        "message is one statement; an empty response has none: [].",
        RelevancyStatements,
        inputs={"response": lambda j: j.output},
        description="Split the response into statements",
    )
    analyze = Prompt(
        'Give one result per statement for its relevance to the input: "yes" if it '
        'directly addresses the input, "unsure" if it is partly relevant (the right kind '
        'of information, or on the question but wrong), "no" if it is unrelated or empty.',
        RelevancyResults,
        inputs={"input": lambda j: j.input, "statements": lambda j: numbered(j.pre.statements)},
        check=one_per_item(lambda j: j.pre.statements, "results", "statement"),
        description="Judge each statement's relevance to the input",
    )

    def score(self, j: AnswerRelevancyView) -> float:
        weights = {"yes": 1.0, "unsure": j.params.uncertainty_weight}
        return weighted_share(j.analysis.results, "result", weights)

    def findings(self, j: AnswerRelevancyView) -> dict[str, Any]:
        pairs = zip(j.pre.statements, j.analysis.results, strict=True)
        return {"input": j.input, "results": [{"statement": s, **r.model_dump()} for s, r in pairs]}

    def reason(self, j: AnswerRelevancyView) -> str:
        results = j.analysis.results
        if not results:
            return f"The score is {fmt(j.score)} because the response has no statements to judge."
        text = (
            f"The score is {fmt(j.score)} because {count(results, 'result', 'yes')} of "
            f"{len(results)} statements directly address the input and "
            f"{count(results, 'result', 'unsure')} are partly relevant "
            f"(counted at {fmt(j.params.uncertainty_weight)})"
        )
        pairs = zip(j.pre.statements, results, strict=True)
        off = [f'"{s}" ({r.reason})' for s, r in pairs if r.result == "no"]
        return text + ("; not relevant: " + "; ".join(off) if off else "") + "."
