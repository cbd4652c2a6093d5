"""Tool-call extraction from scorer run outputs (reference §3.2).

A Mastra message can record tool invocations in two places: ``content.parts``
(``{type: 'tool-invocation', toolInvocation}``, where thrown calls live as
``state: 'output-error'``) and the legacy ``content.toolInvocations`` array (older persisted
messages). Neither is a superset of the other, so every helper here reads the *merged* list
(:func:`merge_tool_invocations`), exactly like the reference, so tool checks and trajectory
scorers agree on what a run called.

OpenAI chat transcripts are understood too: an assistant message's ``tool_calls`` become
invocations in state ``'call'``, upgraded to ``'result'`` (with the parsed content as
``result``) when a later ``{"role": "tool", "tool_call_id": ...}`` message answers them.

Invocations are returned as JSON dicts with the reference's camelCase keys
(``toolCallId``, ``toolName``, ``args``, ``result``, ``state``, ``errorText``, ``isError``).
A missing key or a ``None`` value both stand for JS ``undefined``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COUNTED_STATES",
    "ToolCallInfo",
    "ToolCalls",
    "all_tool_invocations",
    "extract_tool_calls",
    "extract_tool_results",
    "extract_trajectory",
    "merge_tool_invocations",
]

# States that count as "the tool was called": a thrown call (output-error) ran; a
# partial-call (still streaming arguments) did not.
COUNTED_STATES = frozenset({"result", "call", "output-error"})


@dataclass(frozen=True)
class ToolCallInfo:
    """Where one counted tool call sits in the output."""

    tool_name: str
    tool_call_id: str
    message_index: int
    invocation_index: int

    def to_dict(self) -> dict[str, Any]:
        """The reference's camelCase ``ToolCallInfo`` JSON shape."""
        return {
            "toolName": self.tool_name,
            "toolCallId": self.tool_call_id,
            "messageIndex": self.message_index,
            "invocationIndex": self.invocation_index,
        }


@dataclass(frozen=True)
class ToolCalls:
    """Result of :func:`extract_tool_calls`: names in call order plus their positions."""

    tools: list[str] = field(default_factory=list)
    tool_call_infos: list[ToolCallInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The reference's ``{tools, toolCallInfos}`` JSON shape."""
        return {
            "tools": list(self.tools),
            "toolCallInfos": [i.to_dict() for i in self.tool_call_infos],
        }


def _parse_json_or_raw(value: Any) -> Any:
    """JSON-decode a string if it is JSON, else return it unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _openai_arguments(raw: Any) -> Any:
    """OpenAI sends ``function.arguments`` as a JSON string; ``''``/``None`` mean no args."""
    if raw is None or raw == "":
        return {}
    return _parse_json_or_raw(raw)


def _tool_message_result(message: Mapping[str, Any]) -> Any:
    """The result an OpenAI ``role: 'tool'`` message carries (JSON-decoded when possible)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(
            p["text"]
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return _parse_json_or_raw(content)


def _openai_tool_results(output: list[Any]) -> dict[str, tuple[int, Any]]:
    """``tool_call_id -> (message index, result)`` of the first tool message answering it."""
    results: dict[str, tuple[int, Any]] = {}
    for index, message in enumerate(output):
        if not isinstance(message, Mapping) or message.get("role") != "tool":
            continue
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id not in results:
            results[call_id] = (index, _tool_message_result(message))
    return results


def _openai_invocations(
    message: Mapping[str, Any], results: Mapping[str, Any], skip_ids: set[Any]
) -> list[dict[str, Any]]:
    """Invocations for an assistant message's OpenAI ``tool_calls``."""
    tool_calls = message.get("tool_calls")
    if not isinstance(tool_calls, list):
        return []
    invocations: list[dict[str, Any]] = []
    for call in tool_calls:
        if not isinstance(call, Mapping):
            continue
        call_id = call.get("id")
        if call_id and call_id in skip_ids:
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        invocation: dict[str, Any] = {
            "toolCallId": call_id,
            "toolName": function.get("name"),
            "args": _openai_arguments(function.get("arguments")),
            "state": "call",
        }
        if isinstance(call_id, str) and call_id in results:
            invocation["result"] = results[call_id]
            invocation["state"] = "result"
        invocations.append(invocation)
    return invocations


def merge_tool_invocations(
    message: Any, tool_results: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """All tool invocations of one message, merged from parts and the legacy array.

    Every parts invocation is kept in order (parts win on a shared ``toolCallId``: they carry
    the terminal state). Legacy-only invocations are inserted before the next *shared anchor*
    (a parts invocation whose id is also in the legacy array at or after the legacy cursor);
    the remaining legacy-only ones are appended. OpenAI ``tool_calls`` follow, skipping ids
    already seen; ``tool_results`` (``tool_call_id -> result``) marks them answered. The list
    helpers below build ``tool_results`` from the later ``role: 'tool'`` messages.
    """
    if not isinstance(message, Mapping):
        return []
    content = message.get("content")
    from_parts: list[dict[str, Any]] = []
    legacy: list[Any] = []
    if isinstance(content, Mapping):
        parts = content.get("parts")
        if isinstance(parts, list):
            from_parts = [
                p["toolInvocation"]
                for p in parts
                if isinstance(p, Mapping)
                and p.get("type") == "tool-invocation"
                and isinstance(p.get("toolInvocation"), Mapping)
            ]
        raw_legacy = content.get("toolInvocations")
        if isinstance(raw_legacy, list):
            # Non-mapping entries become None placeholders so legacy positions stay aligned.
            legacy = [inv if isinstance(inv, Mapping) else None for inv in raw_legacy]

    part_ids = {inv.get("toolCallId") for inv in from_parts if inv.get("toolCallId")}
    # Like JS ``new Map(entries)``: on duplicate ids the last position wins.
    legacy_positions = {
        (inv.get("toolCallId") if inv is not None else None): i for i, inv in enumerate(legacy)
    }
    merged: list[dict[str, Any]] = []
    cursor = 0
    for invocation in from_parts:
        call_id = invocation.get("toolCallId")
        shared = legacy_positions.get(call_id) if call_id else None
        if shared is not None and shared >= cursor:
            # Retain legacy-only calls that came before this shared anchor.
            for previous in legacy[cursor:shared]:
                if previous is not None and previous.get("toolCallId") not in part_ids:
                    merged.append(previous)
            cursor = shared + 1
        merged.append(invocation)
    for previous in legacy[cursor:]:
        if previous is not None and previous.get("toolCallId") not in part_ids:
            merged.append(previous)

    seen_ids = {inv.get("toolCallId") for inv in merged if inv.get("toolCallId")}
    merged.extend(_openai_invocations(message, tool_results or {}, seen_ids))
    return merged


def _per_message_invocations(output: Any) -> list[list[dict[str, Any]]]:
    """Merged invocations of every output message (index-aligned with ``output``)."""
    if not isinstance(output, list):
        return []
    answered = _openai_tool_results(output)
    per_message: list[list[dict[str, Any]]] = []
    for index, message in enumerate(output):
        # Only a *later* tool message can answer a call.
        results = {cid: res for cid, (at, res) in answered.items() if at > index}
        per_message.append(merge_tool_invocations(message, results))
    return per_message


def all_tool_invocations(output: Any) -> list[dict[str, Any]]:
    """Every merged invocation of every message, in any state (used by ``noToolErrors``)."""
    return [inv for invocations in _per_message_invocations(output) for inv in invocations]


def _is_counted(invocation: Mapping[str, Any]) -> bool:
    name = invocation.get("toolName")
    return isinstance(name, str) and name != "" and invocation.get("state") in COUNTED_STATES


def extract_tool_calls(output: Any) -> ToolCalls:
    """Names and positions of every counted tool call (reference ``extractToolCalls``).

    States ``result``, ``call`` and ``output-error`` count; ``partial-call`` does not.
    ``invocation_index`` is the position in the message's merged list (skipped invocations
    still occupy an index), and a missing id becomes ``"{messageIndex}-{invocationIndex}"``.
    """
    tools: list[str] = []
    infos: list[ToolCallInfo] = []
    for message_index, invocations in enumerate(_per_message_invocations(output)):
        for invocation_index, invocation in enumerate(invocations):
            if not _is_counted(invocation):
                continue
            name = str(invocation["toolName"])
            call_id = invocation.get("toolCallId")
            tools.append(name)
            infos.append(
                ToolCallInfo(
                    tool_name=name,
                    tool_call_id=str(call_id) if call_id else f"{message_index}-{invocation_index}",
                    message_index=message_index,
                    invocation_index=invocation_index,
                )
            )
    return ToolCalls(tools=tools, tool_call_infos=infos)


def extract_tool_results(output: Any) -> list[dict[str, Any]]:
    """``[{toolName, toolCallId, args, result}]`` for answered calls (``extractToolResults``).

    Only ``state == 'result'`` with a result; a thrown call carries ``errorText`` instead and
    yields nothing. Meant e.g. as hallucination-scorer context.
    """
    results: list[dict[str, Any]] = []
    for invocation in all_tool_invocations(output):
        if invocation.get("state") == "result" and invocation.get("result") is not None:
            results.append(
                {
                    "toolName": invocation.get("toolName"),
                    "toolCallId": invocation.get("toolCallId") or "",
                    "args": invocation.get("args") or {},
                    "result": invocation["result"],
                }
            )
    return results


def _as_record(value: Any) -> dict[str, Any] | None:
    """A dict stays a dict, any other non-null value is wrapped as ``{"value": x}``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    return {"value": value}


def extract_trajectory(output: Any) -> dict[str, Any]:
    """A ``Trajectory`` of ``tool_call`` steps from agent output (core ``extractTrajectory``).

    One step per counted invocation: ``{stepType: 'tool_call', name, toolArgs?, toolResult?,
    success}``; ``toolResult`` only for state ``result``; ``success`` means state ``result``
    and ``isError`` not ``True``. Keys whose JS value would be ``undefined`` are omitted, as
    ``JSON.stringify`` would.
    """
    steps: list[dict[str, Any]] = []
    for invocation in all_tool_invocations(output):
        if not _is_counted(invocation):
            continue
        state = invocation.get("state")
        step: dict[str, Any] = {"stepType": "tool_call", "name": invocation["toolName"]}
        tool_args = _as_record(invocation.get("args"))
        if tool_args is not None:
            step["toolArgs"] = tool_args
        tool_result = _as_record(invocation.get("result")) if state == "result" else None
        if tool_result is not None:
            step["toolResult"] = tool_result
        step["success"] = state == "result" and invocation.get("isError") is not True
        steps.append(step)
    return {"steps": steps, "rawOutput": output}
