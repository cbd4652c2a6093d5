"""Summarization: is the summary faithful to its source, and does it keep what matters?

Parity with ``createSummarizationScorer`` (reference §2.24). Two axes, and the score is the
lower one, so a summary passes neither by being faithful but empty nor by being thorough
but wrong:

- alignment: the judge splits the summary into claims and checks each against the source
  (``#supported / #claims``);
- coverage: the judge writes up to ``max_questions`` closed questions from the source, then,
  in a separate call that never sees the source, answers them from the summary alone
  (``#answered / #questions``; the verdicts must be one per question asked, or the call
  gets one repair turn and then fails the run with ``status="error"``).

Score: ``round2(min(alignment, coverage) × scale)``, and 0 when there is nothing to score
(no claims or no questions), as in the reference.

The source text is the run's ``context`` (passages joined by blank lines), else the
``source`` param, else the user's message. The summary is the last non-empty assistant text
of an agent output, else the output's assistant text.

Judge calls: two (claims + questions, coverage), plus one for an ``llm`` reason.

Deviations from the reference
- The reference's ``sourceExtractor`` function becomes the run's ``context`` argument; like
  the extractor it takes precedence over the ``source`` param.
- A run with no source text at all (no context, no ``source`` param, no user message) fails
  with status "error" before any judge call; the reference would judge against an empty
  source and score 0.
- The reason prompt carries the score, both axes, the unsupported claims and the unanswered
  questions; it does not repeat the source and the summary.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.messages.chat import extract_agent_response_messages, is_agent_output
from assay.rounding import round2
from assay.scorers._lib.judge_common import ReasonedJudgeParams, context_list, numbered
from assay.scorers._lib.judge_scorer import JudgeScorer, Needs, Prompt, View, one_per_item

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


def summary_text(j: View[Any]) -> str:
    """The last non-empty assistant text of an agent output, else the assistant text."""
    if is_agent_output(j.ctx.call.output):
        responses = [r for r in extract_agent_response_messages(j.ctx.call.output) if r.strip()]
        if responses:
            return responses[-1]
    return j.output


def source_text(j: View[Any]) -> str:
    """The run's context passages joined, else the ``source`` param, else the user's text."""
    passages = context_list(j.ctx.call.context)
    return "\n\n".join(passages) if passages else j.params.source or j.input


def questions(j: View[Any]) -> list[str]:
    return list(j.pre.questions[: j.params.max_questions])


class Summarization(JudgeScorer[SummarizationParams]):
    """Whether a summary is faithful to its source (claims supported) and covers it (source
    questions answerable from the summary); the lower of the two."""

    type_id, label, params_model = "summarization", "Summarization", SummarizationParams
    reference = "createSummarizationScorer (summarization-scorer)"
    preview_notes = (
        "Source: the run's `context`, else the `source` param, else the user's message. "
        "The coverage judge never sees the source."
    )
    instructions = INSTRUCTIONS
    needs = (
        Needs(
            "source",
            lambda j: bool(source_text(j).strip()),
            "Summarization needs the source text: pass the run's `context`, set the "
            "`source` param, or give the text as the user's message",
        ),
    )
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

    def axes(self, j: View[SummarizationParams]) -> Axes:
        return measure_axes(j.pre, j.analysis, j.params.max_questions)

    def score(self, j: View[SummarizationParams]) -> float:
        axes = self.axes(j)
        return min(axes.alignment, axes.coverage) if axes.scorable else 0.0

    def findings(self, j: View[SummarizationParams]) -> dict[str, Any]:
        axes = self.axes(j)
        return {
            "findings": {
                "alignment": round2(axes.alignment),
                "coverage": round2(axes.coverage),
                "unsupported_claims": axes.unsupported_claims,
                "unanswered_questions": axes.unanswered_questions,
            }
        }

    def reason(self, j: View[SummarizationParams]) -> str:
        axes, head = self.axes(j), f"The score is {j.score} of {j.params.scale}:"
        if not axes.scorable:
            return (
                f"{head} there was nothing to score (the summary yielded no claims or the "
                "source yielded no questions)."
            )
        limiting = "alignment" if axes.alignment <= axes.coverage else "coverage"
        text = (
            f"{head} alignment {round2(axes.alignment)}, coverage {round2(axes.coverage)}; "
            f"{limiting} sets the score."
        )
        if axes.unsupported_claims:
            text += " Unsupported claims: " + "; ".join(axes.unsupported_claims) + "."
        if axes.unanswered_questions:
            text += " Unanswered questions: " + "; ".join(axes.unanswered_questions) + "."
        return text
