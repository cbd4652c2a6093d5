"""Context relevance: how relevant the provided context was, and whether the response used it.

Parity with ``createContextRelevanceScorerLLM`` (reference §2.8). The judge rates each
context passage's relevance to the question (high / medium / low / none), says whether the
response used it, and lists information missing from the context. The score is
``max(0, base − unused − missing) × scale`` with ``base`` the mean relevance weight (high 1,
medium 0.7, low 0.3, none 0), ``unused`` a penalty per highly relevant passage the response
ignored and ``missing`` a capped penalty per missing piece of information.

Deviations from the reference
- The reference's ``contextExtractor`` becomes the run's ``context`` argument (the
  ``context`` param is the fallback). With no context at all the judge is asked about the
  placeholder "[No context was provided for evaluation]" and the score is ``1.0 × scale``
  (unrounded), with the reference's fixed explanation; the answer is then not checked.
- Evaluations that are not exactly one per passage (``context_index`` 0..n-1, each once)
  get one repair turn and then fail the run (``status="error"``).
- ``penalties`` given partially are merged over the defaults (as the reference does too).
- The LLM reason gets the score, the evaluations and the missing information.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import capped_penalty
from assay.scorers._lib.judge_common import ContextJudgeParams, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, Unrounded, View, each_key_once
from assay.scoring.registry import ScorerParams

NO_CONTEXT_PLACEHOLDER = "[No context was provided for evaluation]"
RELEVANCE_WEIGHTS: dict[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


class ContextRelevancePenalties(ScorerParams):
    unused_high_relevance_context: float = Field(
        default=0.1, ge=0.0, description="Penalty per highly relevant passage left unused."
    )
    missing_context_per_item: float = Field(
        default=0.15, ge=0.0, description="Penalty per piece of missing information."
    )
    max_missing_context_penalty: float = Field(
        default=0.5, ge=0.0, description="Cap on the total missing-information penalty."
    )


class ContextRelevanceParams(ContextJudgeParams):
    penalties: ContextRelevancePenalties = Field(
        default_factory=ContextRelevancePenalties,
        description="Penalty rates; keys given are merged over the defaults.",
    )


class ContextEvaluation(BaseModel):
    context_index: int = Field(description="Index of the passage, as numbered in the prompt.")
    contextPiece: str = Field(description="The passage, or its first words to identify it.")
    relevanceLevel: Literal["high", "medium", "low", "none"] = Field(
        description="Relevance of the passage to the question."
    )
    wasUsed: bool = Field(description="Whether the response used information from the passage.")
    reasoning: str = Field(description="One sentence explaining the rating.")


class ContextRelevanceAnalysis(BaseModel):
    evaluations: list[ContextEvaluation] = Field(description="One evaluation per passage.")
    missingContext: list[str] = Field(
        default_factory=list,
        description="Information the question needed that no passage provided.",
    )
    overallAssessment: str = Field(description="One or two sentences on the context overall.")


def no_context_reason(score: float | None) -> str:
    """The reference's fixed explanation for a run without context."""
    return (
        "No context was available for evaluation. The agent response was generated without "
        f"any supporting context. Score: {score}"
    )


class ContextRelevance(JudgeScorer[ContextRelevanceParams]):
    """How relevant the provided context passages were to the question and whether the
    response used the relevant ones, with penalties for missing information."""

    type_id, label, params_model = "context-relevance", "Context Relevance", ContextRelevanceParams
    reference = "createContextRelevanceScorerLLM (context-relevance-scorer)"
    preview_notes = (
        "Context comes from the run's `context` or the `context` param; with none at all the "
        "score is the maximum (the reference's behaviour)."
    )
    instructions = """\
You assess the context passages given to an assistant for answering a question. For each
passage you rate its relevance to the question (high, medium, low or none) and say whether
the assistant's response actually used it. You also list information the question needed
that none of the passages provided. Be concrete and brief."""
    analyze = Prompt(
        "Evaluate each numbered context passage for the question and the response: "
        "its relevance level, whether the response used it, and why. Then list any "
        "information the question needed that the passages lacked (an empty list if "
        "none), and give an overall assessment.",
        ContextRelevanceAnalysis,
        inputs={
            "question": lambda j: j.input,
            "response": lambda j: j.output,
            "context passages": lambda j: numbered(j.context or [NO_CONTEXT_PLACEHOLDER]),
        },
        check=each_key_once(
            lambda j: range(len(j.context)) if j.context else None,
            "evaluations",
            "context_index",
            "passage",
        ),
        description="Rate each passage's relevance and whether the response used it",
    )

    def describe_score(self, j: View[ContextRelevanceParams]) -> str:
        p = j.params.penalties
        return (
            "the mean relevance of the passages (high 1, medium 0.7, low 0.3, none 0), minus "
            f"{p.unused_high_relevance_context} per highly relevant passage the response did "
            f"not use and {p.missing_context_per_item} per piece of missing information (at "
            f"most {p.max_missing_context_penalty})"
        )

    def score(self, j: View[ContextRelevanceParams]) -> float:
        if not j.context:
            return Unrounded(1.0)
        penalties, evaluations = j.params.penalties, j.analysis.evaluations
        base = sum(RELEVANCE_WEIGHTS[e.relevanceLevel] for e in evaluations) / len(evaluations)
        unused = sum(1 for e in evaluations if e.relevanceLevel == "high" and not e.wasUsed)
        missing = capped_penalty(
            len(j.analysis.missingContext),
            penalties.missing_context_per_item,
            penalties.max_missing_context_penalty,
        )
        return max(0.0, base - unused * penalties.unused_high_relevance_context - missing)

    def findings(self, j: View[ContextRelevanceParams]) -> dict[str, Any]:
        if not j.context:
            return {"result": no_context_reason(j.score)}
        fields = {"context_index", "relevanceLevel", "wasUsed", "reasoning"}
        return {
            "passage evaluations": [e.model_dump(include=fields) for e in j.analysis.evaluations],
            "missing information": j.analysis.missingContext,
        }

    def reason(self, j: View[ContextRelevanceParams]) -> str:
        if not j.context:
            return no_context_reason(j.score)
        evaluations, missing = j.analysis.evaluations, j.analysis.missingContext
        counts = {
            lvl: sum(e.relevanceLevel == lvl for e in evaluations) for lvl in RELEVANCE_WEIGHTS
        }
        levels = ", ".join(f"{n} {level}" for level, n in counts.items() if n)
        unused = [
            str(e.context_index)
            for e in evaluations
            if e.relevanceLevel == "high" and not e.wasUsed
        ]
        text = f"The score is {j.score} of {j.params.scale}: passage relevance was {levels}."
        if unused:
            text += f" Highly relevant passages not used by the response: {', '.join(unused)}."
        return text + (" Missing information: " + "; ".join(missing) + "." if missing else "")
