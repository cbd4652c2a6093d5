"""An agent's trajectory as a conversation (Inspect's transcript view): the messages of an
item's input and output, with each tool call and its result, for the item page.

Chat messages in the OpenAI shape are read (``role``, ``content`` as text or parts,
``tool_calls`` with ``function.name``/``arguments``, ``tool`` messages with
``tool_call_id``), as a list or under a ``messages`` key. Anything else is not a
transcript (``None``) and the page shows the raw value as before. Values stay data: the
template escapes every string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from assay.messages.chat import get_text_content

MAX_TURNS = 500


class ToolCallView(BaseModel):
    id: str | None = None
    name: str
    arguments: str


class TranscriptTurn(BaseModel):
    """One message: who spoke, the text, the tools it called, the call it answers."""

    source: str
    """``input`` or ``output``: which side of the item the message came from."""
    role: str
    text: str = ""
    name: str | None = None
    tool_calls: list[ToolCallView] = []
    tool_call_id: str | None = None


def _messages(value: Any) -> list[Mapping[str, Any]] | None:
    if isinstance(value, Mapping):
        value = value.get("messages")
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in value):
        return None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=repr, indent=2)


def _calls(message: Mapping[str, Any]) -> list[ToolCallView]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    views = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        assert isinstance(function, Mapping)
        name = function.get("name")
        arguments = function.get("arguments", function.get("args"))
        views.append(
            ToolCallView(
                id=str(call["id"]) if call.get("id") is not None else None,
                name=str(name) if name is not None else "(unnamed tool)",
                arguments=arguments if isinstance(arguments, str) else _text(arguments),
            )
        )
    return views


def transcript_of(input_value: Any, output: Any) -> list[TranscriptTurn] | None:
    """The item's messages in order (input's, then output's), or ``None`` when neither
    side is a list of chat messages."""
    sides = [("input", _messages(input_value)), ("output", _messages(output))]
    if not any(messages for _, messages in sides):
        return None
    turns: list[TranscriptTurn] = []
    for source, messages in sides:
        for message in messages or []:
            if len(turns) >= MAX_TURNS:
                return turns
            content = message.get("content")
            try:
                text = get_text_content(message) if not isinstance(content, str) else content
            except (TypeError, ValueError, AttributeError):
                text = _text(content)
            if not text and content not in (None, "", []):
                text = _text(content)
            name = message.get("name")
            call_id = message.get("tool_call_id")
            turns.append(
                TranscriptTurn(
                    source=source,
                    role=str(message["role"]),
                    text=text or "",
                    name=str(name) if name is not None else None,
                    tool_calls=_calls(message),
                    tool_call_id=str(call_id) if call_id is not None else None,
                )
            )
    return turns
