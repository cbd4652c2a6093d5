"""Summarization's two axes: the judge's claim and coverage verdicts, the axis ratios, and
where the summary and its source text come from.

Kept apart from ``summarization`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.messages.chat import extract_agent_response_messages, is_agent_output
from assay.rounding import round2
from assay.scorers._lib.judge_common import context_list
from assay.scorers._lib.judge_scorer import AnyView

NO_SOURCE = (
    "Summarization needs the source text: pass the run's `context`, set the "
    "`source` param, or give the text as the user's message"
)


class AlignmentVerdict(BaseModel):
    claim: str = Field(description="One atomic claim of the summary.")
    supported: bool = Field(description="Whether the source supports the claim.")
    reason: str = Field(description="One sentence.")


class SourceJudgement(BaseModel):
    alignment: list[AlignmentVerdict] = Field(description="One verdict per summary claim.")
    questions: list[str] = Field(
        description="Closed questions the source answers 'yes', covering its key information."
    )


class CoverageVerdict(BaseModel):
    question: str = Field(description="The question, as given.")
    answered: bool = Field(description="Whether the summary alone answers it.")
    reason: str = Field(description="One sentence.")


class CoverageJudgement(BaseModel):
    coverage: list[CoverageVerdict] = Field(description="One verdict per question, in order.")


def _ratio(matched: int, total: int) -> float:
    return 0.0 if total == 0 else min(1.0, matched / total)


class Axes(BaseModel):
    alignment: float
    coverage: float
    unsupported_claims: list[str]
    unanswered_questions: list[str]
    scorable: bool

    def findings(self) -> dict[str, Any]:
        """The axes (rounded) and what lowered them, for the LLM reason."""
        return {
            "alignment": round2(self.alignment),
            "coverage": round2(self.coverage),
            "unsupported_claims": self.unsupported_claims,
            "unanswered_questions": self.unanswered_questions,
        }


def measure_axes(
    judgement: SourceJudgement, coverage: CoverageJudgement, max_questions: int
) -> Axes:
    """Both axis ratios; coverage counts against the questions asked, not the verdicts."""
    total_questions = min(len(judgement.questions), max_questions)
    judged = coverage.coverage[:total_questions]
    alignment = judgement.alignment
    return Axes(
        alignment=_ratio(sum(1 for v in alignment if v.supported), len(alignment)),
        coverage=_ratio(sum(1 for v in judged if v.answered), total_questions),
        unsupported_claims=[v.claim for v in alignment if not v.supported],
        unanswered_questions=[v.question for v in judged if not v.answered],
        scorable=bool(alignment) and total_questions > 0,
    )


def summary_text(j: AnyView) -> str:
    """The last non-empty assistant text of an agent output, else the assistant text."""
    if is_agent_output(j.ctx.call.output):
        responses = [r for r in extract_agent_response_messages(j.ctx.call.output) if r.strip()]
        if responses:
            return responses[-1]
    return j.output


def source_text(j: AnyView) -> str:
    """The run's context passages joined, else the ``source`` param, else the user's text."""
    passages = context_list(j.ctx.call.context)
    return "\n\n".join(passages) if passages else j.params.source or j.input


def has_source(j: AnyView) -> bool:
    return bool(source_text(j).strip())


def questions(j: AnyView) -> list[str]:
    """The coverage questions asked: the judge's, at most ``max_questions``."""
    return list(j.pre.questions[: j.params.max_questions])
