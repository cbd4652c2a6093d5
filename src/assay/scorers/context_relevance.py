"""Context relevance: how relevant the provided context was, and whether the response used it.

Formula and deviations from the reference: docs/scorers.md, "context-relevance"."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.judge_common import ContextJudgeParams, numbered
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Prompt,
    Unrounded,
    View,
    each_key_once,
    listed,
)
from assay.scorers._lib.passage_relevance import (
    NO_CONTEXT_PLACEHOLDER,
    ContextRelevanceAnalysis,
    ContextRelevancePenalties,
    no_context_reason,
    relevance_score,
)
from assay.scoring.registry import register_scorer


class ContextRelevanceParams(ContextJudgeParams):
    penalties: ContextRelevancePenalties = Field(
        default_factory=ContextRelevancePenalties,
        description="Penalty rates; keys given are merged over the defaults.",
    )


ContextRelevanceView = View[ContextRelevanceParams, None, ContextRelevanceAnalysis]
"""What ContextRelevance's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "context-relevance",
    label="Context Relevance",
    params=ContextRelevanceParams,
    reference="createContextRelevanceScorerLLM (context-relevance-scorer)",
    preview_notes=(
        "Context comes from the run's `context` or the `context` param; with none at all the "
        "score is the maximum (the reference's behaviour)."
    ),
)
class ContextRelevance(JudgeScorer[ContextRelevanceParams, None, ContextRelevanceAnalysis]):
    """How relevant the provided context passages were to the question and whether the
    response used the relevant ones, with penalties for missing information."""

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

    def describe_score(self, j: ContextRelevanceView) -> str:
        p = j.params.penalties
        return (
            "the mean relevance of the passages (high 1, medium 0.7, low 0.3, none 0), minus "
            f"{p.unused_high_relevance_context} per highly relevant passage the response did "
            f"not use and {p.missing_context_per_item} per piece of missing information (at "
            f"most {p.max_missing_context_penalty})"
        )

    def score(self, j: ContextRelevanceView) -> float:
        if not j.context:
            return Unrounded(1.0)
        return relevance_score(j.analysis, j.params.penalties)

    def findings(self, j: ContextRelevanceView) -> dict[str, Any]:
        if not j.context:
            return {"result": no_context_reason(j.score)}
        fields = {"context_index", "relevanceLevel", "wasUsed", "reasoning"}
        return {
            "passage evaluations": [e.model_dump(include=fields) for e in j.analysis.evaluations],
            "missing information": j.analysis.missingContext,
        }

    def reason(self, j: ContextRelevanceView) -> str:
        if not j.context:
            return no_context_reason(j.score)
        analysis: ContextRelevanceAnalysis = j.analysis
        levels, unused = analysis.levels(), analysis.unused_indices()
        text = f"{j.headline}: passage relevance was {levels}."
        text += listed("Highly relevant passages not used by the response", unused, ", ")
        return text + listed("Missing information", analysis.missingContext)
