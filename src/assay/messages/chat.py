"""Text extraction from scorer run inputs and outputs (reference §3.1).

Scorers receive runs as plain JSON-shaped data in several shapes: the agent shape (Mastra
``MastraDBMessage`` lists with ``content.parts`` / legacy ``content.content``), OpenAI chat
messages (``{"role", "content": str | [parts]}``), bare strings, or ad-hoc dicts. These
helpers mirror the reference's ``@mastra/evals/scorers/utils`` functions one to one, so the
scores computed on top of them match the reference, and they never mutate their arguments.

JS ``undefined`` is represented by ``None`` (or a missing key); JS "falsy" checks on strings
are mirrored with explicit emptiness tests. The reference throws a ``TypeError`` when it
dereferences ``null``; this module raises ``ValueError`` in the equivalent places.

Beyond the reference, :func:`input_texts` / :func:`output_texts` give the code scorers the
list of texts they compare, whatever shape the run has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "effective_role",
    "extract_agent_response_messages",
    "extract_input_messages",
    "get_assistant_message",
    "get_combined_system_prompt",
    "get_conversation_history",
    "get_reasoning",
    "get_system_messages",
    "get_text_content",
    "get_user_message",
    "input_texts",
    "is_agent_input",
    "is_agent_output",
    "output_texts",
    "text_of",
]

DEFAULT_CONVERSATION_HISTORY_MESSAGES = 10

# The phrase the reference's completeness scorer throws with; kept in our errors so callers
# (and tests ported from the reference) can match on it.
_NULL_INPUT_MESSAGE = "Inputs cannot be null or undefined"


def _last_text_part(parts: list[Any]) -> Any:
    """The ``text`` of the last ``{type: 'text'}`` part, or ``None`` if there is none.

    The reference (like the AI SDK) uses only the *last* text part of a message: earlier text
    parts are intermediate step output that the final one supersedes.
    """
    text_parts = [p for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
    return text_parts[-1].get("text") if text_parts else None


def get_text_content(message: Any) -> str:
    """Text of one message (reference ``getTextContentFromMastraDBMessage``).

    Order: ``content`` string; ``content`` part list (last text part); non-empty
    ``content.content``; non-empty ``content.text``; ``content.parts`` (last text part); ``''``.
    Works for Mastra messages and OpenAI chat messages alike.

    Raises:
        ValueError: if ``message`` is ``None`` (the reference throws dereferencing ``null``).
    """
    if message is None:
        raise ValueError(f"{_NULL_INPUT_MESSAGE}: message is None")
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        text = _last_text_part(content)
        return text if isinstance(text, str) else ""
    if not isinstance(content, Mapping):
        return ""
    inner = content.get("content")
    if isinstance(inner, str) and inner != "":
        return inner
    text = content.get("text")
    if isinstance(text, str) and text != "":
        return text
    parts = content.get("parts")
    if isinstance(parts, list):
        last = _last_text_part(parts)
        return last if isinstance(last, str) else ""
    return ""


def _non_empty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def text_of(value: Any) -> str | None:
    """Best-effort text of an arbitrary value (reference internal ``getTextFromValue``).

    String -> itself (``None`` if empty); list -> last text part's text (may be ``''``);
    mapping -> ``text_of(content) ?? text ?? body ?? text_of(parts)`` (non-empty strings
    only). ``None`` means "no text here", so callers can fall through to other sources.
    """
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, list):
        texts = [
            p["text"]
            for p in value
            if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        return texts[-1] if texts else None
    if not isinstance(value, Mapping):
        return None
    parts = value.get("parts")
    from_parts = text_of(parts) if isinstance(parts, list) else None
    for candidate in (
        text_of(value.get("content")),
        _non_empty_str(value.get("text")),
        _non_empty_str(value.get("body")),
        from_parts,
    ):
        if candidate is not None:
            return candidate
    return None


def effective_role(message: Any) -> str | None:
    """The semantic role of a message.

    Messages delivered through Mastra's signal API are stored with ``role: 'signal'`` and
    carry their real role in ``content.metadata.signal.tagName``, then
    ``content.metadata.signal.type``, then the top-level ``type``.
    """
    if not isinstance(message, Mapping):
        return None
    role = message.get("role")
    if role != "signal":
        return role if isinstance(role, str) else None
    content = message.get("content")
    metadata = content.get("metadata") if isinstance(content, Mapping) else None
    signal = metadata.get("signal") if isinstance(metadata, Mapping) else None
    if isinstance(signal, Mapping):
        for key in ("tagName", "type"):
            if isinstance(signal.get(key), str):
                return str(signal[key])
    top_level = message.get("type")
    return top_level if isinstance(top_level, str) else None


def _text_of_first_with_role(messages: Any, role: str) -> str | None:
    """``text_of`` the first message whose effective role is ``role``.

    Only the first such message is considered: if it has no text the result is ``None``
    (the reference does not look further), letting the caller fall through.
    """
    if not isinstance(messages, list):
        return None
    for message in messages:
        if isinstance(message, Mapping) and effective_role(message) == role:
            return text_of(message)
    return None


def is_agent_input(value: Any) -> bool:
    """True for the full agent input shape (reference ``isScorerRunInputForAgent``)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("inputMessages"), list)
        and isinstance(value.get("rememberedMessages"), list)
        and isinstance(value.get("systemMessages"), list)
        and isinstance(value.get("taggedSystemMessages"), Mapping)
    )


def _is_db_message_like(message: Any) -> bool:
    return (
        isinstance(message, Mapping)
        and isinstance(message.get("id"), str)
        and isinstance(message.get("role"), str)
        and "content" in message
        and "createdAt" in message
    )


def is_agent_output(value: Any) -> bool:
    """True for a list of Mastra DB messages (reference ``isScorerRunOutputForAgent``).

    An empty list qualifies (``Array.prototype.every`` on ``[]`` is true).
    """
    return isinstance(value, list) and all(_is_db_message_like(m) for m in value)


def get_user_message(run_input: Any) -> str | None:
    """The user's message text (reference ``getUserMessageFromRunInput``).

    String -> itself; mapping -> first user message of ``inputMessages``, then of
    ``messages``, then ``prompt`` / ``text`` strings, then the text of ``content``, ``input``,
    ``user``. A bare list (the legacy ``create_test_run`` shape) yields ``None``, as in the
    reference.
    """
    if isinstance(run_input, str):
        return run_input
    if not isinstance(run_input, Mapping):
        return None
    for candidate in (
        _text_of_first_with_role(run_input.get("inputMessages"), "user"),
        _text_of_first_with_role(run_input.get("messages"), "user"),
        run_input.get("prompt") if isinstance(run_input.get("prompt"), str) else None,
        run_input.get("text") if isinstance(run_input.get("text"), str) else None,
        text_of(run_input.get("content")),
        text_of(run_input.get("input")),
        text_of(run_input.get("user")),
    ):
        if candidate is not None:
            return candidate
    return None


def get_assistant_message(output: Any) -> str | None:
    """The assistant's response text (reference ``getAssistantMessageFromRunOutput``).

    For a message list the *last* assistant message that has text wins, because a trailing
    assistant message may hold only tool calls. Single-message / ``{text}`` / ``{content}``
    dicts and bare strings are accepted too. A ``role`` of ``None`` counts as absent.
    """
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        assistants = [
            m for m in output if isinstance(m, Mapping) and effective_role(m) == "assistant"
        ]
        for message in reversed(assistants):
            text = text_of(message)
            if text:
                return text
        return None
    if not isinstance(output, Mapping):
        return None
    role = output.get("role")
    is_assistant_output = role is None or role == "assistant"
    content = output.get("content")
    if is_assistant_output and isinstance(output.get("text"), str):
        return str(output["text"])
    if is_assistant_output and isinstance(content, str):
        return content
    if is_assistant_output and isinstance(content, Mapping | list):
        return get_text_content(output) or get_text_content(content) or None
    if role == "assistant":
        return get_text_content(output) or None
    return None


def get_reasoning(output: Any) -> str | None:
    """Reasoning text of the first assistant message (reference ``getReasoningFromRunOutput``).

    Reads ``content.reasoning`` or ``reasoning`` parts (``details[].text`` concatenated, else
    ``part.reasoning``), joined by newlines. Beyond the reference, an OpenAI-style message
    whose ``content`` is not a Mastra content object may carry a ``reasoning_content`` /
    ``reasoning`` string (DeepSeek and OpenAI-compatible servers put it there).
    """
    if not isinstance(output, list):
        return None
    message = next(
        (m for m in output if isinstance(m, Mapping) and m.get("role") == "assistant"), None
    )
    if message is None:
        return None
    content = message.get("content")
    if not isinstance(content, Mapping):
        for key in ("reasoning_content", "reasoning"):
            value = _non_empty_str(message.get(key))
            if value is not None:
                return value
        return None
    reasoning = _non_empty_str(content.get("reasoning"))
    if reasoning is not None:
        return reasoning
    parts = content.get("parts")
    if not isinstance(parts, list):
        return None
    reasoning_parts = [p for p in parts if isinstance(p, Mapping) and p.get("type") == "reasoning"]
    if not reasoning_parts:
        return None
    texts: list[str] = []
    for part in reasoning_parts:
        details = part.get("details")
        if isinstance(details, list):
            text = "".join(
                _js_join_item(d.get("text"))
                for d in details
                if isinstance(d, Mapping) and d.get("type") == "text"
            )
        else:
            text = _js_join_item(part.get("reasoning"))
        if text:
            texts.append(text)
    return "\n".join(texts) if texts else None


def _js_join_item(value: Any) -> str:
    """How ``Array.prototype.join`` renders an element: ``null``/``undefined`` -> ``''``."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _system_content_text(message: Any) -> str:
    """Text of a ``CoreSystemMessage``: string content, or its text parts joined by a space."""
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            _js_join_item(p.get("text") or None)
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def get_system_messages(run_input: Any) -> list[str]:
    """All system prompt texts of a run input (reference ``getSystemMessagesFromRunInput``).

    ``systemMessages`` first, then ``role == 'system'`` messages in ``inputMessages`` and
    ``messages``, then every message of every ``taggedSystemMessages`` group; empties skipped.
    """
    result: list[str] = []
    if not isinstance(run_input, Mapping):
        return result
    system_messages = run_input.get("systemMessages")
    if isinstance(system_messages, list):
        result.extend(t for t in map(_system_content_text, system_messages) if t)
    for key in ("inputMessages", "messages"):
        messages = run_input.get(key)
        if isinstance(messages, list):
            for message in messages:
                if isinstance(message, Mapping) and message.get("role") == "system":
                    text = text_of(message)
                    if text:
                        result.append(text)
    tagged = run_input.get("taggedSystemMessages")
    if isinstance(tagged, Mapping):
        for group in tagged.values():
            if isinstance(group, list):
                for message in group:
                    text = text_of(message)
                    if text:
                        result.append(text)
    return result


def get_combined_system_prompt(run_input: Any) -> str:
    """All system prompts joined by a blank line (reference ``getCombinedSystemPrompt``)."""
    return "\n\n".join(get_system_messages(run_input))


def get_conversation_history(run_input: Any, max_messages: int | None = 10) -> str | None:
    """Recent remembered history as a ``role: text`` transcript, one message per line.

    Only agent-shaped inputs carry ``rememberedMessages``; anything else (and an empty
    history, or ``max_messages <= 0``) returns ``None`` so callers fall back to single-turn
    behaviour. ``max_messages=None`` means the default of 10.
    """
    if not is_agent_input(run_input):
        return None
    limit = DEFAULT_CONVERSATION_HISTORY_MESSAGES if max_messages is None else max_messages
    if limit <= 0:
        return None
    lines: list[str] = []
    for message in run_input["rememberedMessages"][-limit:]:
        if not isinstance(message, Mapping):
            continue
        role = effective_role(message)
        text = get_text_content(message).strip()
        if role and text:
            lines.append(f"{role}: {text}")
    return "\n".join(lines) if lines else None


def extract_input_messages(run_input: Any) -> list[str]:
    """Texts of all ``inputMessages``, any role (reference ``extractInputMessages``)."""
    if not isinstance(run_input, Mapping):
        return []
    messages = run_input.get("inputMessages")
    if not isinstance(messages, list):
        return []
    return [get_text_content(m) for m in messages]


def extract_agent_response_messages(output: Any) -> list[str]:
    """Texts of the ``role == 'assistant'`` output messages (``extractAgentResponseMessages``).

    The raw role is used (not the signal-resolved one), as in the reference.
    """
    if not isinstance(output, list):
        return []
    return [
        get_text_content(m)
        for m in output
        if isinstance(m, Mapping) and m.get("role") == "assistant"
    ]


def _message_list_texts(messages: list[Any], *, skip_tool_messages: bool) -> list[str]:
    texts: list[str] = []
    for message in messages:
        if isinstance(message, str):
            texts.append(message)
            continue
        if skip_tool_messages and isinstance(message, Mapping) and message.get("role") == "tool":
            continue
        texts.append(get_text_content(message))
    return texts


def _dict_text(value: Mapping[str, Any]) -> str | None:
    """Text of a single ``{text}`` / ``{content}`` / ``{prompt}`` dict, ``None`` if none."""
    if isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value.get("content"), str):
        return str(value["content"])
    if "content" in value and value["content"] is not None:
        return get_text_content(value) or text_of(value) or ""
    if isinstance(value.get("prompt"), str):
        return str(value["prompt"])
    return None


def input_texts(run_input: Any) -> list[str]:
    """The input texts a code scorer compares against the output.

    - ``str`` -> ``[str]``; ``None`` -> ``[]``;
    - agent input (has ``inputMessages``) -> the text of **every** input message regardless
      of role, as the reference code scorers do;
    - a message list (Mastra or OpenAI chat; bare strings allowed) -> text of every message;
    - ``{"messages": [...]}`` -> likewise; a ``{text}`` / ``{content}`` / ``{prompt}`` dict ->
      that text.

    Raises:
        ValueError: ``inputMessages`` is ``None``/not a list, a message is ``None``, or the
            shape is not recognised (scoring silently on no text would fake a result).
    """
    if run_input is None:
        return []
    if isinstance(run_input, str):
        return [run_input]
    if isinstance(run_input, list):
        return _message_list_texts(run_input, skip_tool_messages=False)
    if isinstance(run_input, Mapping):
        if "inputMessages" in run_input:
            messages = run_input["inputMessages"]
            if not isinstance(messages, list):
                raise ValueError(
                    f"{_NULL_INPUT_MESSAGE}: input.inputMessages must be a list, "
                    f"got {type(messages).__name__}"
                )
            return [get_text_content(m) for m in messages]
        if isinstance(run_input.get("messages"), list):
            return _message_list_texts(run_input["messages"], skip_tool_messages=False)
        text = _dict_text(run_input)
        if text is not None:
            return [text]
    raise ValueError(f"Unsupported scorer input shape: {type(run_input).__name__}")


def output_texts(output: Any, *, include_tool_messages: bool = False) -> list[str]:
    """The output texts a code scorer compares against the input.

    - ``str`` -> ``[str]``; ``None`` -> ``[]``;
    - a message list -> text of every message (the reference code scorers read all output
      messages, not only assistant ones). OpenAI ``role: 'tool'`` result messages are skipped
      unless ``include_tool_messages``: in the reference's own message format tool results
      live inside the assistant message and contribute no text, so skipping keeps an OpenAI
      transcript scoring like its Mastra equivalent;
    - a ``{text}`` / ``{content}`` dict (e.g. the legacy ``{role: 'assistant', text}`` output)
      -> that text.

    Raises:
        ValueError: a message is ``None`` or the shape is not recognised.
    """
    if output is None:
        return []
    if isinstance(output, str):
        return [output]
    if isinstance(output, list):
        return _message_list_texts(output, skip_tool_messages=not include_tool_messages)
    if isinstance(output, Mapping):
        text = _dict_text(output)
        if text is not None:
            return [text]
    hint = ""
    if isinstance(output, Mapping):
        keys = ", ".join(sorted(map(str, output))[:8])
        hint = (
            f" with keys {keys}; when the target returns an object, set output_key in the "
            "target config to the text to score (a dotted path such as 'answer')"
        )
    raise ValueError(f"Unsupported scorer output shape: {type(output).__name__}{hint}")
