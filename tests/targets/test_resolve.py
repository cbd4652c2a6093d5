from __future__ import annotations

import pytest

from assay.targets import (
    AgentTarget,
    CallableTarget,
    ModelPromptTarget,
    ScorerTarget,
    StoredOutputTarget,
    TargetResolutionError,
    WorkflowTarget,
    resolve_target,
    target_from_spec,
)
from assay.targets.stored import MissingOutputError
from assay.types import Item

REF = "tests.targets.fixture_targets"


def item(**fields: object) -> Item:
    return Item(id="a", **{"input": "hi", **fields})  # type: ignore[arg-type]


async def test_import_path_function_gets_input() -> None:
    target = resolve_target(f"{REF}:upper")
    assert isinstance(target, CallableTarget)
    assert target.spec.ref == f"{REF}:upper" and target.spec.kind == "callable"
    assert (await target.execute(item())).output == "HI"


async def test_async_function_and_keyword_fields() -> None:
    assert (await resolve_target(f"{REF}:async_upper").execute(item())).output == "HI"
    target = resolve_target(f"{REF}:with_expected")
    out = await target.execute(item(expected_output="E", metadata={"tag": "t"}))
    assert out.output == "hi|E|t"


async def test_agent_and_workflow_protocols() -> None:
    agent = resolve_target(f"{REF}:agent")
    workflow = resolve_target(f"{REF}:workflow")
    assert isinstance(agent, AgentTarget) and isinstance(workflow, WorkflowTarget)
    assert (await agent.execute(item())).output == {"text": "agent:hi"}
    assert (await workflow.execute(item())).output == "workflow:hi"


async def test_scorer_object_becomes_scorer_target() -> None:
    target = resolve_target(f"{REF}:length_scorer")
    assert isinstance(target, ScorerTarget)
    out = await target.execute(Item(id="x", input="q", output="12345"))
    assert out.output == {"score": 0.5, "reason": None}


def test_none_is_stored_output_and_missing_output_is_an_error() -> None:
    target = resolve_target(None)
    assert isinstance(target, StoredOutputTarget)
    with pytest.raises(MissingOutputError, match="'a' has no 'output'"):
        import asyncio

        asyncio.run(target.execute(item()))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "expected 'package.module:attribute'"),
        ("tests.nope_module:x", "cannot import 'tests.nope_module'"),
        (f"{REF}:missing", "has no attribute 'missing'"),
        ({"type": "model", "prompt": "x"}, "missing field 'model'"),
        ({"type": "wat"}, "unknown type 'wat'"),
        ({"type": "scorer"}, "missing field 'scorer'"),
    ],
)
def test_bad_targets_say_what_is_wrong(spec: object, message: str) -> None:
    with pytest.raises(TargetResolutionError, match=message):
        resolve_target(spec)


def test_model_target_from_config_and_spec_roundtrip() -> None:
    config = {"type": "model", "model": "openai/gpt-4o-mini", "prompt": "Q: {{ input }}"}
    target = resolve_target(config)
    assert isinstance(target, ModelPromptTarget)
    again = target_from_spec(target.spec)
    assert isinstance(again, ModelPromptTarget)
    assert again.spec == target.spec


def test_spec_of_python_object_cannot_be_recreated() -> None:
    target = resolve_target(lambda text: text)
    with pytest.raises(TargetResolutionError, match="pass the target again"):
        target_from_spec(target.spec)


def test_registered_scorer_target_roundtrips_through_spec() -> None:
    target = resolve_target(
        {"type": "scorer", "scorer": "exact-match", "params": {"ignore_case": True}}
    )
    assert target.spec.config == {
        "type": "exact-match",
        "params": {"ignore_case": True, "ignore_punctuation": False, "strip": True},
    }
    again = target_from_spec(target.spec)
    assert isinstance(again, ScorerTarget) and again.scorer.params["ignore_case"] is True
