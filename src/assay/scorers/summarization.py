"""Summarization: is the summary faithful to its source, and does it keep what matters?

Formula, sources and deviations from the reference: docs/scorers.md, "summarization"."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.rounding import round2
from assay.scorers._lib.judge_common import ReasonedJudgeParams, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Needs, Prompt, View, listed, one_per_item
from assay.scorers._lib.summary_axes import (
    NO_SOURCE,
    Axes,
    CoverageJudgement,
    SourceJudgement,
    has_source,
    measure_axes,
    questions,
    source_text,
    summary_text,
)
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You assess summaries. You check each claim of a summary against its source text, write
closed questions that the source answers, or decide which of those questions a summary
answers. Use only the texts given to you, never your own knowledge: a claim the source does
not state is unsupported, and a question the summary does not answer is unanswered."""


class SummarizationParams(ReasonedJudgeParams):
    source: str | None = Field(
        default=None,
        description="The text being summarized, used when a run brings no `context`; "
        "default: the user's message.",
    )
    max_questions: int = Field(
        default=10, ge=1, description="Upper bound on the coverage questions drawn from the source."
    )


SummarizationView = View[SummarizationParams, SourceJudgement, CoverageJudgement]
"""What Summarization's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "summarization",
    label="Summarization",
    params=SummarizationParams,
    reference="createSummarizationScorer (summarization-scorer)",
    preview_notes=(
        "Source: the run's `context`, else the `source` param, else the user's message. "
        "The coverage judge never sees the source."
    ),
)
class Summarization(JudgeScorer[SummarizationParams, SourceJudgement, CoverageJudgement]):
    """Whether a summary is faithful to its source (claims supported) and covers it (source
    questions answerable from the summary); the lower of the two."""

    instructions = INSTRUCTIONS
    needs = (Needs("source", has_source, NO_SOURCE),)
    meaning = (
        "the lower of alignment (share of summary claims the source supports) and coverage "
        "(share of source questions the summary answers)"
    )
    preprocess = Prompt(
        lambda j: (
            "1. Split the summary into atomic claims and decide for each whether the "
            "source supports it.\n2. Using the source alone, write at most "
            f"{j.params.max_questions} closed questions whose answer in the source is 'yes', "
            "together covering its most important information."
        ),
        SourceJudgement,
        inputs={"source": source_text, "summary": summary_text},
        description="Check summary claims against the source; draw coverage questions",
    )
    analyze = Prompt(
        "For each numbered question, decide whether the summary alone answers it. "
        "Do not use any other knowledge. Give one verdict per question, in order.",
        CoverageJudgement,
        inputs={"summary": summary_text, "questions": lambda j: numbered(questions(j))},
        check=one_per_item(questions, "coverage", "question"),
        description="Answer the coverage questions from the summary only",
    )

    def axes(self, j: SummarizationView) -> Axes:
        return measure_axes(j.pre, j.analysis, j.params.max_questions)

    def score(self, j: SummarizationView) -> float:
        axes = self.axes(j)
        return min(axes.alignment, axes.coverage) if axes.scorable else 0.0

    def findings(self, j: SummarizationView) -> dict[str, Any]:
        return {"findings": self.axes(j).findings()}

    def reason(self, j: SummarizationView) -> str:
        axes, head = self.axes(j), f"{j.headline}:"
        if not axes.scorable:
            why = "the summary yielded no claims or the source yielded no questions"
            return f"{head} there was nothing to score ({why})."
        limiting = "alignment" if axes.alignment <= axes.coverage else "coverage"
        shown = f"alignment {round2(axes.alignment)}, coverage {round2(axes.coverage)}"
        text = f"{head} {shown}; {limiting} sets the score."
        text += listed("Unsupported claims", axes.unsupported_claims)
        return text + listed("Unanswered questions", axes.unanswered_questions)
