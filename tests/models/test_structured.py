"""Strict-mode schema conversion and the prompt form of a schema."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.models.structured import (
    prompt_contains_schema,
    schema_instruction,
    schema_name,
    strict_schema,
)


class Claim(BaseModel):
    text: str = Field(description="the claim")
    supported: bool | None = None


class Analysis(BaseModel):
    claims: list[Claim]
    best: Claim | None = None
    label: Literal["yes", "no"] = "no"
    weight: float = Field(default=1.0, ge=0)


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_strict_schema_closes_every_object_and_requires_every_property() -> None:
    original = Analysis.model_json_schema()
    strict = strict_schema(original)
    assert strict is not None
    objects = _objects(strict)
    assert len(objects) == 2  # Analysis and Claim (in $defs)
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert "default" not in json.dumps(strict)
    # constraints and enums survive; the input is not mutated
    assert strict["properties"]["weight"]["minimum"] == 0
    assert strict["properties"]["label"]["enum"] == ["yes", "no"]
    assert "additionalProperties" not in original


def test_ref_siblings_are_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {"c": {"$ref": "#/$defs/C", "description": "x"}},
        "$defs": {"C": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    strict = strict_schema(schema)
    assert strict is not None
    assert strict["properties"]["c"] == {"$ref": "#/$defs/C"}


def test_schemas_strict_mode_cannot_express_are_refused() -> None:
    class FreeForm(BaseModel):
        scores: dict[str, float]

    class Pair(BaseModel):
        pair: tuple[int, str]

    assert strict_schema(FreeForm.model_json_schema()) is None
    assert strict_schema(Pair.model_json_schema()) is None
    assert strict_schema({"type": "array", "items": {"type": "string"}}) is None  # root not object
    assert strict_schema({"type": "object", "properties": {}, "allOf": []}) is None


def test_schema_name_is_sanitised() -> None:
    assert schema_name({"title": "Verdicts"}) == "Verdicts"
    assert schema_name({"title": "my schema!"}) == "my_schema"
    assert schema_name({}) == "answer"
    assert len(schema_name({"title": "x" * 200})) == 64


def test_schema_instruction_carries_the_exact_schema() -> None:
    schema = Analysis.model_json_schema()
    text = schema_instruction(schema)
    assert prompt_contains_schema(text, schema)
    assert "JSON Schema" in text
    assert not prompt_contains_schema("nothing here", schema)
