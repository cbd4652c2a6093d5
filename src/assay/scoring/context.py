"""What a step sees: the scorer call being scored and the results of the steps before it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.types import StepName


@dataclass(frozen=True, slots=True)
class ScorerCall:
    """The arguments of one ``scorer.run`` call.

    ``input``/``output`` may be strings, chat message lists, or the reference's agent
    shapes; ``ground_truth`` is the expected answer (the dataset's ``expected_output``);
    ``context`` holds retrieved passages; ``expected_trajectory`` is the trajectory
    expectation of trajectory scorers.
    """

    output: Any
    input: Any = None
    ground_truth: Any = None
    context: Any = None
    expected_trajectory: Any = None
    call_id: str = ""
    """Identifies this one scorer call (not an evaluation run) in results and logs."""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StepContext:
    """The single argument every step receives.

    ``results`` maps the names of completed steps to their results; ``score`` is set for
    the reason step. The properties give the common texts without every step re-parsing
    message shapes.
    """

    call: ScorerCall
    results: dict[StepName, Any]
    score: float | None = None

    @property
    def preprocess_result(self) -> Any:
        return self.results.get("preprocess")

    @property
    def analyze_result(self) -> Any:
        return self.results.get("analyze")

    @property
    def input_text(self) -> str:
        """The user's message text (the reference's ``getUserMessageFromRunInput``)."""
        from assay.messages.chat import effective_role, get_user_message, text_of

        text = get_user_message(self.call.input)
        if text is None and isinstance(self.call.input, list):
            # a bare chat transcript (OpenAI style): the latest user turn
            for message in reversed(self.call.input):
                if effective_role(message) == "user" and (text := text_of(message)):
                    break
        return text or ""

    @property
    def output_text(self) -> str:
        """The last assistant text (the reference's ``getAssistantMessageFromRunOutput``)."""
        from assay.messages.chat import get_assistant_message

        return get_assistant_message(self.call.output) or ""


@dataclass(frozen=True, slots=True)
class NotScorable:
    """Returned by a function step to stop the pipeline without a score."""

    reason: str | None = None


def not_scorable(reason: str | None = None) -> NotScorable:
    """Stop the pipeline here: the result gets ``status="not_scorable"`` and no score."""
    return NotScorable(reason)
