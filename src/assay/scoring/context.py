"""What a step sees: the scorer call being scored and the results of the steps before it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
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


_new = object.__new__


def _slot(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of slot ``name`` of ``cls`` (a member descriptor's ``__set__``)."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


_call_slots = (
    _slot(ScorerCall, "output"),
    _slot(ScorerCall, "input"),
    _slot(ScorerCall, "ground_truth"),
    _slot(ScorerCall, "context"),
    _slot(ScorerCall, "expected_trajectory"),
    _slot(ScorerCall, "call_id"),
    _slot(ScorerCall, "metadata"),
)


def scorer_call(
    output: Any,
    input: Any,
    ground_truth: Any,
    context: Any,
    expected_trajectory: Any,
    call_id: str,
    metadata: dict[str, Any],
) -> ScorerCall:
    """``ScorerCall(...)`` with every field given, for the pipeline's hot path.

    Why: a frozen dataclass sets each field through ``object.__setattr__``; setting the
    slots directly builds the same (frozen, equal) object in about half the time, and the
    pipeline builds one per scored item. ``tests/scoring/test_context.py`` checks the two are
    equal; the field order is checked at import below.
    """
    call = _new(ScorerCall)
    o, i, g, c, e, k, m = _call_slots
    o(call, output)
    i(call, input)
    g(call, ground_truth)
    c(call, context)
    e(call, expected_trajectory)
    k(call, call_id)
    m(call, metadata)
    return call


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


_context_slots = (
    _slot(StepContext, "call"),
    _slot(StepContext, "results"),
    _slot(StepContext, "score"),
)


def step_context(
    call: ScorerCall, results: dict[StepName, Any], score: float | None
) -> StepContext:
    """``StepContext(call, results, score)`` for the hot path (see ``scorer_call``)."""
    ctx = _new(StepContext)
    c, r, s = _context_slots
    c(ctx, call)
    r(ctx, results)
    s(ctx, score)
    return ctx


for _cls, _names in (
    (
        ScorerCall,
        (
            "output",
            "input",
            "ground_truth",
            "context",
            "expected_trajectory",
            "call_id",
            "metadata",
        ),
    ),
    (StepContext, ("call", "results", "score")),
):
    if tuple(f.name for f in fields(_cls)) != _names:  # a field added without its fast path
        raise TypeError(f"{_cls.__name__}'s fields changed: update its fast constructor")


@dataclass(frozen=True, slots=True)
class NotScorable:
    """Returned by a function step to stop the pipeline without a score."""

    reason: str | None = None


def not_scorable(reason: str | None = None) -> NotScorable:
    """Stop the pipeline here: the result gets ``status="not_scorable"`` and no score."""
    return NotScorable(reason)
