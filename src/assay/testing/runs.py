"""Builders for scorer test runs (reference §3.3).

They produce the same JSON-shaped messages and runs as the reference's test helpers, so
tests ported from Mastra (and the acceptance cases in ``tests/fixtures/scorer_cases.json``)
can be expressed one to one. ``createdAt`` is an ISO-8601 string (``Date.toJSON`` format)
rather than a ``datetime`` so that everything stays JSON-serialisable. Run-level keys use
this project's snake_case (``request_context``, ``run_id``); message keys keep the
reference's camelCase.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypedDict, Unpack

__all__ = [
    "UNSET",
    "create_agent_test_run",
    "create_test_message",
    "create_test_run",
    "create_tool_invocation",
    "create_trajectory_test_run",
    "is_closer_to",
    "now_iso",
]


class _Unset(enum.Enum):
    """Sentinel type: "argument not given" (JS ``undefined``), distinct from ``None``.

    The reference's defaults only apply to ``undefined``; an explicit ``null`` (``None``)
    is kept, which the invalid-input acceptance cases rely on (``inputMessages: null``).
    """

    UNSET = enum.auto()


UNSET: Final = _Unset.UNSET

ListArg = Sequence[Any] | Literal[_Unset.UNSET] | None
MappingArg = Mapping[str, Any] | Literal[_Unset.UNSET] | None

# Keys copied from a legacy tool invocation, in the reference's order.
_LEGACY_INVOCATION_KEYS = ("toolCallId", "toolName", "args", "result", "state")


def now_iso() -> str:
    """Current UTC time as JS ``Date.prototype.toJSON`` renders it (ms precision, ``Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def create_tool_invocation(
    tool_call_id: str,
    tool_name: str,
    args: Mapping[str, Any] | None = None,
    *,
    result: Any = None,
    state: str = "result",
    error_text: str | None = None,
    is_error: bool | None = None,
) -> dict[str, Any]:
    """A tool invocation dict (reference ``createToolInvocation``).

    ``result`` is omitted when ``None`` (JS ``undefined``, e.g. for a thrown call with
    ``state='output-error'`` and ``error_text``); ``errorText`` / ``isError`` only when given.
    """
    invocation: dict[str, Any] = {
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "args": dict(args) if args is not None else {},
    }
    if result is not None:
        invocation["result"] = result
    invocation["state"] = state
    if error_text is not None:
        invocation["errorText"] = error_text
    if is_error is not None:
        invocation["isError"] = is_error
    return invocation


def create_test_message(
    content: str,
    role: str,
    id: str = "test-message",
    tool_invocations: Sequence[Mapping[str, Any]] | None = None,
    parts: Sequence[Any] | None = None,
    *,
    created_at: str | None = None,
) -> dict[str, Any]:
    """A Mastra DB message (reference ``createTestMessage``).

    The text goes both into ``content.content`` and, unless ``parts`` is given, a single
    text part. ``tool_invocations`` populate the *legacy* ``content.toolInvocations`` array
    (only the keys ``toolCallId, toolName, args, result, state`` are kept, and the key is
    absent when the list is empty); native parts are needed for e.g. thrown calls.
    ``created_at`` defaults to now.
    """
    message_content: dict[str, Any] = {
        "format": 2,
        "parts": list(parts) if parts is not None else [{"type": "text", "text": content}],
        "content": content,
    }
    if tool_invocations:
        message_content["toolInvocations"] = [
            {key: inv[key] for key in _LEGACY_INVOCATION_KEYS if key in inv}
            for inv in tool_invocations
        ]
    return {
        "id": id,
        "role": role,
        "content": message_content,
        "createdAt": created_at if created_at is not None else now_iso(),
    }


def _list_arg(value: ListArg) -> list[Any] | None:
    if value is UNSET:
        return []
    return None if value is None else list(value)


def _agent_input(
    input_messages: ListArg,
    remembered_messages: ListArg,
    system_messages: ListArg,
    tagged_system_messages: MappingArg,
) -> dict[str, Any]:
    tagged: dict[str, Any] | None
    if tagged_system_messages is UNSET:
        tagged = {}
    else:
        tagged = None if tagged_system_messages is None else dict(tagged_system_messages)
    return {
        "inputMessages": _list_arg(input_messages),
        "rememberedMessages": _list_arg(remembered_messages),
        "systemMessages": _list_arg(system_messages),
        "taggedSystemMessages": tagged,
    }


def create_agent_test_run(
    *,
    output: Any,
    input_messages: ListArg = UNSET,
    remembered_messages: ListArg = UNSET,
    system_messages: ListArg = UNSET,
    tagged_system_messages: MappingArg = UNSET,
    request_context: Mapping[str, Any] | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """A full agent-shaped run (reference ``createAgentTestRun``).

    Returns ``{"input": {inputMessages, rememberedMessages, systemMessages,
    taggedSystemMessages}, "output", "request_context", "run_id"}``. Omitted lists default to
    ``[]``; an explicit ``None`` is kept as ``None`` (JS ``null``) to build invalid runs.
    """
    return {
        "input": _agent_input(
            input_messages, remembered_messages, system_messages, tagged_system_messages
        ),
        "output": output,
        "request_context": dict(request_context) if request_context is not None else {},
        "run_id": run_id if run_id is not None else str(uuid.uuid4()),
    }


class AgentRunParts(TypedDict, total=False):
    """The keywords of ``create_agent_test_run`` besides ``output``, which
    ``create_trajectory_test_run`` passes on."""

    input_messages: ListArg
    remembered_messages: ListArg
    system_messages: ListArg
    tagged_system_messages: MappingArg
    request_context: Mapping[str, Any] | None
    run_id: str | None


def create_trajectory_test_run(
    *,
    trajectory: Mapping[str, Any],
    expected_trajectory: Mapping[str, Any] | None = None,
    **parts: Unpack[AgentRunParts],
) -> dict[str, Any]:
    """A run for trajectory scorers (``createTrajectoryTestRun``): ``output`` is a Trajectory;
    the other keywords are ``create_agent_test_run``'s.

    ``expected_trajectory`` is included only when given.
    """
    run = create_agent_test_run(output=trajectory, **parts)
    if expected_trajectory is not None:
        run["expected_trajectory"] = expected_trajectory
    return run


def create_test_run(
    input: str,
    output: str,
    additional_context: Mapping[str, Any] | None = None,
    request_context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The legacy run shape (reference ``createTestRun``).

    ``{"input": [{role: 'user', content}], "output": {role: 'assistant', text},
    "additional_context", "request_context"}``. Not understood by the agent-shaped code
    scorers in the reference (``get_user_message`` returns ``None`` for it).
    """
    return {
        "input": [{"role": "user", "content": input}],
        "output": {"role": "assistant", "text": output},
        "additional_context": dict(additional_context) if additional_context is not None else {},
        "request_context": dict(request_context) if request_context is not None else {},
    }


def is_closer_to(value: float, target1: float, target2: float) -> bool:
    """True if ``value`` is strictly closer to ``target1`` than to ``target2``."""
    return abs(value - target1) < abs(value - target2)
