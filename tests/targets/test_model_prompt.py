from __future__ import annotations

import pickle

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


@pytest.mark.parametrize(
    ("prompt", "system", "hint"),
    [
        ("{input}", None, "write {{ input }}, not {input}"),
        ("Say hello", None, "every item is sent the same text"),
        ("Question: { question }", "Be brief", "write {{ question }}"),
    ],
)
async def test_a_prompt_without_a_variable_warns_on_every_item(
    prompt: str, system: str | None, hint: str, caplog: pytest.LogCaptureFixture
) -> None:
    target = ModelPromptTarget(prompt, ScriptedModel(["a", "b"]), system=system)
    assert hint in caplog.text
    for n in range(2):
        out = await target.execute(Item(id=str(n), input=f"q{n}"))
        assert any(hint in w for w in out.warnings), out.warnings


async def test_a_prompt_with_a_variable_in_either_template_does_not_warn() -> None:
    for prompt, system in [("{{ input }}", None), ("Answer.", "Item {{ id }}")]:
        target = ModelPromptTarget(prompt, ScriptedModel(["a"]), system=system)
        assert (await target.execute(Item(id="1", input="q"))).warnings == ()


async def test_a_pickled_target_renders_and_answers_as_the_original() -> None:
    """What a Ray worker receives: compiled Jinja templates pickle but cannot be loaded
    again, so the target travels with its sources and compiles them on arrival."""
    target = ModelPromptTarget(
        "Answer {{ question }}", ScriptedModel(["Paris"]), system="Be brief about {{ id }}"
    )
    copy = pickle.loads(pickle.dumps(target))
    item = Item(id="q1", input={"question": "capital of France?"})
    assert copy.render(item) == target.render(item)
    assert copy.spec == target.spec
    assert (await copy.execute(item)).output == "Paris"
    with pytest.raises(ValueError, match="'nope' is undefined"):
        await pickle.loads(
            pickle.dumps(ModelPromptTarget("{{ nope }}", ScriptedModel(["x"])))
        ).execute(item)
