"""JSON Schema helpers for structured output: strict-mode conversion and prompt fallback.

OpenAI's strict structured output accepts a subset of JSON Schema: every object lists all
its properties as required and forbids additional ones, and a few keywords are not allowed.
``strict_schema`` rewrites a pydantic-generated schema into that subset when it can (all
fields required, ``additionalProperties: false``, ``default`` dropped, ``$ref`` siblings
dropped) and returns ``None`` when it cannot (free-form dicts, tuples, ``allOf``/``oneOf`` ...), in
which case the schema is sent non-strict. Strict mode makes every field required, which is
fine for judge answers: the model then always states every field, and validation against the
original pydantic model still applies defaults and constraints.

``schema_instruction`` is the text that carries the schema in the prompt for endpoints that
refuse (or ignore) ``response_format``. It uses ``json.dumps(schema)`` exactly as the judge's
repair message does, so a message that already contains the schema is not given it twice.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

_UNSUPPORTED_IN_STRICT = frozenset(
    {
        "allOf",
        "not",
        "oneOf",
        "if",
        "then",
        "else",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "contains",
        "minContains",
        "maxContains",
        "prefixItems",
    }
)
_REF_SIBLINGS_DROPPED = frozenset({"description", "title", "default", "examples"})


class _NotStrict(Exception):
    pass


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A strict-mode-compatible copy of ``schema``, or ``None`` if it cannot be made one."""
    if schema.get("type") != "object" or "properties" not in schema:
        return None
    try:
        converted: dict[str, Any] = _strictify(copy.deepcopy(schema))
    except _NotStrict:
        return None
    return converted


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    if _UNSUPPORTED_IN_STRICT.intersection(node):
        raise _NotStrict
    if "$ref" in node:
        extra = set(node) - {"$ref"} - _REF_SIBLINGS_DROPPED
        if extra:
            raise _NotStrict
        return {"$ref": node["$ref"]}
    node.pop("default", None)
    is_object = node.get("type") == "object" or "properties" in node
    if is_object:
        properties = node.get("properties")
        if not isinstance(properties, dict):
            raise _NotStrict  # a free-form object (dict[str, X]) has no fixed properties
        if node.get("additionalProperties") not in (None, False):
            raise _NotStrict
        node["additionalProperties"] = False
        node["required"] = list(properties)
        node["properties"] = {name: _strictify(sub) for name, sub in properties.items()}
    for key in ("items", "anyOf"):
        if key in node:
            node[key] = _strictify(node[key])
    for key in ("$defs", "definitions"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strictify(sub) for name, sub in node[key].items()}
    return node


_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def schema_name(schema: dict[str, Any]) -> str:
    """The ``json_schema.name`` field: the schema's title, sanitised (``^[A-Za-z0-9_-]{1,64}$``)."""
    title = schema.get("title")
    name = _NAME_CHARS.sub("_", title).strip("_") if isinstance(title, str) else ""
    return (name or "answer")[:64]


def schema_instruction(schema: dict[str, Any]) -> str:
    """The instruction that carries ``schema`` in the prompt."""
    return (
        "Answer with only a JSON object that matches this JSON Schema, no other text:\n"
        f"{json.dumps(schema)}"
    )


def prompt_contains_schema(text: str, schema: dict[str, Any]) -> bool:
    return json.dumps(schema) in text
