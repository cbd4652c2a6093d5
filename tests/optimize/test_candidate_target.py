"""Candidate texts reach the model literally, whatever template syntax they contain."""

from __future__ import annotations

import pytest

from assay.optimize.candidate_target import candidate_hash, candidate_target, system_text
from assay.scoring.sync import run_sync
from assay.testing import ScriptedModel
from assay.types import Item

TRICKY = [
    "plain",
    "Use {{ input }} literally and {% if x %}this{% endif %}",
    "a {% endraw %} b {%- endraw -%} c {%endraw%}",
    "{# not a comment #} and {{",
]


@pytest.mark.parametrize("text", TRICKY)
def test_component_text_is_sent_as_written(text: str) -> None:
    model = ScriptedModel(script=["ok"])
    target = candidate_target({"a": text, "b": "Second."}, "Q: {{ input }}", model)
    output = run_sync(lambda: target.execute(Item(id="1", input="two")))
    assert output.output == "ok"
    [call] = model.calls
    assert call.messages[0].content == f"{text}\n\nSecond."
    assert call.messages[1].content == "Q: two"


def test_system_text_and_hash() -> None:
    assert system_text({"a": "x", "b": "  ", "c": "y"}) == "x\n\ny"
    assert candidate_hash({"a": "x"}) == candidate_hash({"a": "x"})
    assert candidate_hash({"a": "x"}) != candidate_hash({"a": "y"})
    assert candidate_hash({"a": "x", "b": "y"}) != candidate_hash({"b": "y", "a": "x"})
