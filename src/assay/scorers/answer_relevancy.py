"""Answer relevancy: how much of the response addresses the user's input.

Reference structure (``createAnswerRelevancyScorer``): a judge call splits the response
into statements (it does not need the input), a second call marks each statement's
relevance to the input — ``"yes"`` directly relevant, ``"unsure"`` partly relevant (the
right kind of information, or on the question but wrong), ``"no"`` unrelated. Relevance,
not correctness, is judged. Score ``round2((#yes + uncertainty_weight·#unsure) / n ×
scale)``, results compared after trim and lower-casing; no statements → 0.

Deviations from the reference
- Params merge over the defaults. The reference replaces its whole default options object
  when any option is passed, so ``{scale: 10}`` alone leaves ``uncertaintyWeight``
  undefined and any "unsure" turns the score into NaN; here ``uncertainty_weight`` keeps
  its default 0.3.
- ``uncertainty_weight`` must lie in [0, 1] (the reference does not check it).
- The user's text reaches the judge inside a data block rather than JSON-quoted.
- The LLM reason prompt gets the input, the per-statement results and the score, not the
  full output (the statements are the output).
- A result other than "yes", "unsure" or "no" (after trimming and lower-casing), or a number
  of results that differs from the number of statements, gets one repair turn and then fails
  the run (``status="error"``); the reference counts such labels as 0 and scores whatever
  results came back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from assay.rounding import round2
from assay.scorers._lib.judge_common import (
    ReasonedJudgeParams,
    data_block,
    judge_config,
    numbered,
    with_reason,
)
from assay.scorers._lib.verdicts import TRIMMED_LOWERED, one_per
from assay.scoring.context import StepContext
from assay.scoring.registry import register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

INSTRUCTIONS = (
    "You judge how relevant a response is to the user's input. Judge relevance, not "
    "correctness; partly relevant statements count as partial. An empty response or an "
    "error message is not relevant."
)


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


def _fmt(value: float) -> str:
    return f"{value:g}"


def _counts(results: list[RelevancyResult]) -> tuple[int, int]:
    labels = [r.result.strip().lower() for r in results]
    return labels.count("yes"), labels.count("unsure")


@register_scorer(
    "answer-relevancy",
    label="Answer Relevancy",
    description=(
        "How much of the response addresses the user's input (LLM judge: split into "
        "statements, then a yes/unsure/no relevance verdict per statement)."
    ),
    params=AnswerRelevancyParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createAnswerRelevancyScorer (answer-relevancy-scorer)",
    preview_notes="2 judge calls, 3 with reason='llm'. 'unsure' counts uncertainty_weight.",
)
def build(params: AnswerRelevancyParams) -> Scorer:
    def preprocess_prompt(ctx: StepContext) -> str:
        return (
            "Split the response into its meaningful statements. Do not over-split, but split "
            "a compound statement joined by 'and' into its parts. A single word or an error "
            "message is one statement; an empty response has none: [].\n\n"
            + data_block("response", ctx.output_text)
        )

    def analyze_prompt(ctx: StepContext) -> str:
        statements: list[str] = ctx.preprocess_result.statements
        return (
            'Give one result per statement for its relevance to the input: "yes" if it '
            'directly addresses the input, "unsure" if it is partly relevant (the right kind '
            'of information, or on the question but wrong), "no" if it is unrelated or '
            "empty.\n\n"
            f"{data_block('input', ctx.input_text)}\n\n"
            f"{data_block('statements', numbered(statements))}"
        )

    def score(ctx: StepContext) -> float:
        analysis = ctx.analyze_result
        results: list[RelevancyResult] = analysis.results if analysis is not None else []
        if not results:
            return 0.0
        yes, unsure = _counts(results)
        return round2((yes + params.uncertainty_weight * unsure) / len(results) * params.scale)

    def template_reason(ctx: StepContext) -> str:
        results: list[RelevancyResult] = ctx.analyze_result.results
        value = _fmt(ctx.score or 0.0)
        if not results:
            return f"The score is {value} because the response has no statements to judge."
        yes, unsure = _counts(results)
        text = (
            f"The score is {value} because {yes} of {len(results)} statements directly "
            f"address the input and {unsure} are partly relevant "
            f"(counted at {_fmt(params.uncertainty_weight)})"
        )
        statements: list[str] = ctx.preprocess_result.statements
        off = [
            f'"{statement}" ({r.reason})'
            for statement, r in zip(statements, results, strict=True)
            if r.result.strip().lower() not in ("yes", "unsure")
        ]
        if off:
            text += "; not relevant: " + "; ".join(off)
        return text + "."

    def reason_prompt(ctx: StepContext) -> str:
        statements: list[str] = ctx.preprocess_result.statements
        results: list[RelevancyResult] = ctx.analyze_result.results
        rows = [
            {"statement": statement, "result": r.result, "reason": r.reason}
            for statement, r in zip(statements, results, strict=True)
        ]
        value = _fmt(ctx.score or 0.0)
        return (
            f"The relevancy score is {value} on a 0-{_fmt(params.scale)} scale. In at most "
            f'two sentences, explain it, starting with "The score is {value} because".\n\n'
            f"{data_block('input', ctx.input_text)}\n\n{data_block('results', rows)}"
        )

    scorer = (
        Scorer(
            "answer-relevancy",
            description="Relevance of the response to the input",
            judge=judge_config(params, INSTRUCTIONS),
        )
        .preprocess(
            judge_step(
                preprocess_prompt,
                RelevancyStatements,
                description="Split the response into statements",
                version="1",
            )
        )
        .analyze(
            judge_step(
                analyze_prompt,
                RelevancyResults,
                description="Judge each statement's relevance to the input",
                version="1",
                check=one_per(lambda ctx: ctx.preprocess_result.statements, "results", "statement"),
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
