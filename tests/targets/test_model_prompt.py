from __future__ import annotations

import pytest

from assay.targets.model_prompt import ModelPromptTarget
from assay.testing.scripted import ScriptedModel
from assay.types import Item


async def test_renders_item_fields_and_dict_input_keys() -> None:
    model = ScriptedModel(["Paris"])
    target = ModelPromptTarget(
        "Answer {{ question }} (topic {{ metadata.topic }})",
        model,
        system="Be brief about {{ id }}",
    )
    item = Item(id="q1", input={"question": "capital of France?"}, metadata={"topic": "geo"})
    messages = target.render(item)
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].content == "Be brief about q1"
    assert messages[1].content == "Answer capital of France? (topic geo)"
    assert (await target.execute(item)).output == "Paris"


async def test_undefined_template_name_fails_the_item() -> None:
    target = ModelPromptTarget("{{ nope }}", ScriptedModel(["x"]))
    with pytest.raises(ValueError, match="'nope' is undefined"):
        await target.execute(Item(id="1", input="q"))


def test_template_syntax_error_is_reported() -> None:
    with pytest.raises(ValueError, match="template error line 1"):
        ModelPromptTarget("{{ broken", ScriptedModel(["x"]))
