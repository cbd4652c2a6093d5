"""OpenTelemetry GenAI spans (OTLP JSON) → assay items.

Read: the OTLP/JSON export shape (``resourceSpans[].scopeSpans[].spans[]``, attributes as
``{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" |
"arrayValue"}}``) and the GenAI semantic conventions: ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (JSON text or arrays of ``{role, parts: [{type: "text",
content} | {type: "tool_call", id, name, arguments}]}``), the older ``gen_ai.prompt`` /
``gen_ai.completion`` attributes and ``gen_ai.*.message`` / ``gen_ai.choice`` events,
``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` /
``output_tokens``. A span without any GenAI input or output is not an LLM call and is
skipped. The item id is ``traceId:spanId`` (stable: re-ingesting the same export finds
the same ids). Anything malformed raises ``TraceFormatError`` naming the span.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from assay.types import Item


class TraceFormatError(ValueError):
    """The file is not OTLP JSON of the expected shape (the message names where)."""


def _value(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values") or [], "kvlist")
    return None


def _attributes(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise TraceFormatError(f"{where}: attributes must be a list")
    out: dict[str, Any] = {}
    for entry in raw:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise TraceFormatError(f"{where}: each attribute needs a string 'key'")
        out[entry["key"]] = _value(entry.get("value"))
    return out


def _messages(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [{"role": "user", "parts": [{"type": "text", "content": value}]}]
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(m, Mapping) for m in value):
        raise TraceFormatError(f"{where}: messages must be a list of objects")
    return [dict(m) for m in value]


def _text(message: Mapping[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        return "\n".join(texts)
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _tool_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for message in messages:
        for part in message.get("parts") or []:
            if isinstance(part, Mapping) and part.get("type") == "tool_call":
                calls.append(
                    {"id": part.get("id"), "name": part.get("name"), "args": part.get("arguments")}
                )
    return calls


def span_item(span: Mapping[str, Any], where: str) -> Item | None:
    """The item of one span, or None when the span is not an LLM call."""
    trace_id, span_id = span.get("traceId"), span.get("spanId")
    if not isinstance(trace_id, str) or not isinstance(span_id, str) or not span_id:
        raise TraceFormatError(f"{where}: 'traceId' and 'spanId' must be non-empty strings")
    attrs = _attributes(span.get("attributes"), where)
    inputs = _messages(attrs.get("gen_ai.input.messages") or attrs.get("gen_ai.prompt"), where)
    outputs = _messages(
        attrs.get("gen_ai.output.messages") or attrs.get("gen_ai.completion"), where
    )
    for n, event in enumerate(span.get("events") or []):
        if not isinstance(event, Mapping):
            raise TraceFormatError(f"{where}: events[{n}] must be an object")
        name = str(event.get("name") or "")
        body = _attributes(event.get("attributes"), f"{where} events[{n}]")
        if name == "gen_ai.choice":
            message = body.get("message")
            outputs += _messages(message if message is not None else body, where)
        elif name.startswith("gen_ai.") and name.endswith(".message"):
            role = name.removeprefix("gen_ai.").removesuffix(".message")
            inputs.append({"role": role, "content": body.get("content", "")})
    if not inputs and not outputs:
        return None
    users = [m for m in inputs if m.get("role") == "user"]
    question = _text(users[-1]) if users else (_text(inputs[-1]) if inputs else "")
    answer = "\n".join(t for t in (_text(m) for m in outputs) if t)
    metadata: dict[str, Any] = {
        "trace_id": trace_id,
        "span_id": span_id,
        "span_name": span.get("name"),
        "model": attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model"),
        "input_tokens": attrs.get("gen_ai.usage.input_tokens"),
        "output_tokens": attrs.get("gen_ai.usage.output_tokens"),
        "input_messages": inputs,
        "tool_calls": _tool_calls(outputs),
    }
    return Item(id=f"{trace_id}:{span_id}", input=question, output=answer, metadata=metadata)


def otel_items(document: Any) -> Iterator[Item]:
    """The LLM-call items of an OTLP JSON document (``{"resourceSpans": [...]}``)."""
    if not isinstance(document, Mapping) or not isinstance(document.get("resourceSpans"), list):
        raise TraceFormatError("expected an OTLP JSON object with a 'resourceSpans' list")
    for r, resource in enumerate(document["resourceSpans"]):
        scopes = resource.get("scopeSpans") if isinstance(resource, Mapping) else None
        if not isinstance(scopes, list):
            raise TraceFormatError(f"resourceSpans[{r}]: 'scopeSpans' must be a list")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans") if isinstance(scope, Mapping) else None
            if not isinstance(spans, list):
                raise TraceFormatError(
                    f"resourceSpans[{r}].scopeSpans[{s}]: 'spans' must be a list"
                )
            for n, span in enumerate(spans):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                if not isinstance(span, Mapping):
                    raise TraceFormatError(f"{where}: must be an object")
                item = span_item(span, where)
                if item is not None:
                    yield item
