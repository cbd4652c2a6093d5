"""What targets return: usage and samples (``TargetOutput``-like objects and dicts), and
``output_key`` for targets that return objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from assay.models.base import ModelSettings
from assay.runner.api import run_evals
from assay.targets.base import OutputKeyError, TargetOutput, as_usage, pick_output, target_output
from assay.targets.callable import CallableTarget
from assay.targets.identity import fingerprinted_spec
from assay.targets.model_prompt import ModelPromptTarget
from assay.targets.resolve import TargetResolutionError, resolve_target, target_from_spec
from assay.testing.scripted import ScriptedModel
from assay.types import Item, Usage

ROWS = [
    {"id": "a", "input": "paris", "expected_output": "PARIS"},
    {"id": "b", "input": "rome", "expected_output": "ROME"},
]
FIXTURES = "tests.targets.fixture_targets"


@dataclass
class Reply:
    """A TargetOutput-like object an application might return."""

    output: str
    usage: dict[str, int]
    cost_usd: float


def test_target_output_like_values() -> None:
    envelope = target_output(
        {"output": "x", "usage": {"input_tokens": 4, "output_tokens": 1}, "samples": ["x", "y"]}
    )
    assert envelope.output == "x" and envelope.samples == ["x", "y"]
    assert envelope.usage == Usage(input_tokens=4, output_tokens=1)
    like = target_output(Reply("y", {"prompt_tokens": 2, "completion_tokens": 3}, 0.5))
    assert like.output == "y" and like.cost_usd == 0.5
    assert like.usage is not None and like.usage.total_tokens == 5
    own = target_output(TargetOutput("z", ("careful",), usage=Usage(input_tokens=1)))
    assert own.output == "z" and own.warnings == ("careful",) and own.usage is not None
    # a dict with other keys is an output, not an envelope
    plain = target_output({"output": "x", "confidence": 0.9})
    assert plain.output == {"output": "x", "confidence": 0.9} and plain.usage is None


def test_pick_output_walks_keys_indexes_and_attributes() -> None:
    value = {"choices": [{"text": "a"}, {"text": "b"}], "reply": Reply("r", {}, 0.0)}
    assert pick_output(value, "choices.1.text") == "b"
    assert pick_output(value, "choices.-1.text") == "b"
    assert pick_output(value, "reply.output") == "r"
    assert pick_output(value, lambda v: v["choices"][0]["text"]) == "a"
    with pytest.raises(OutputKeyError, match=r"output_key 'choices.5.text': no '5' at 'choices'"):
        pick_output(value, "choices.5.text")
    with pytest.raises(OutputKeyError, match=r"no 'answer' in the target's output .*choices"):
        pick_output(value, "answer")


def test_as_usage_reads_openai_and_assay_names() -> None:
    assert as_usage({"prompt_tokens": 3, "completion_tokens": 2}) == Usage(
        input_tokens=3, output_tokens=2
    )
    assert as_usage(None) is None
    with pytest.raises(TypeError, match="token counts"):
        as_usage("lots")


def test_dict_output_without_output_key_says_to_set_it() -> None:
    run = run_evals(ROWS, f"{FIXTURES}:answer_object", ["exact-match"], progress=False)
    score = run.results[0].scores["exact-match"]
    assert score.status == "error" and score.error is not None
    assert "Unsupported scorer output shape: dict" in score.error.message
    assert "output_key" in score.error.message and "answer" in score.error.message


def test_output_key_scores_the_answer_and_keeps_the_usage_beside_it() -> None:
    target = {"type": "callable", "ref": f"{FIXTURES}:answer_object", "output_key": "answer"}
    run = run_evals(ROWS, target, ["exact-match"], progress=False)
    assert [r.output for r in run.results] == ["PARIS", "ROME"]
    assert [r.scores["exact-match"].score for r in run.results] == [1.0, 1.0]
    first = run.results[0]
    assert first.usage == Usage(input_tokens=3, output_tokens=2) and first.cost_usd == 0.25
    assert run.summary.target_usage == Usage(input_tokens=6, output_tokens=4)
    assert run.summary.target_cost_usd == pytest.approx(0.5)
    assert run.info.target.config == {"output_key": "answer"}


def test_output_fn_and_resume_recreate_the_output_key() -> None:
    target = resolve_target(
        {
            "type": "callable",
            "ref": f"{FIXTURES}:choices_object",
            "output_fn": f"{FIXTURES}:first_choice_text",
        }
    )
    run = run_evals([{"id": "a", "input": "q"}], target, progress=False)
    assert run.results[0].output == "first:q"
    spec = fingerprinted_spec(target)
    assert spec.config == {"output_fn": f"{FIXTURES}:first_choice_text"}
    again = target_from_spec(spec)
    assert fingerprinted_spec(again).fingerprint == spec.fingerprint
    keyed = resolve_target(
        {"type": "callable", "ref": f"{FIXTURES}:answer_object", "output_key": "answer"}
    )
    assert (
        fingerprinted_spec(keyed).fingerprint
        != fingerprinted_spec(
            resolve_target({"type": "callable", "ref": f"{FIXTURES}:answer_object"})
        ).fingerprint
    )  # a different output is a different target
    assert isinstance(target_from_spec(fingerprinted_spec(keyed)), CallableTarget)


def test_missing_output_key_fails_the_item_naming_the_path() -> None:
    target = {"type": "callable", "ref": f"{FIXTURES}:answer_object", "output_key": "reply.text"}
    run = run_evals(ROWS, target, ["exact-match"], progress=False)
    error = run.results[0].error
    assert error is not None and error.kind == "OutputKeyError"
    assert "output_key 'reply.text'" in error.message and "'answer'" in error.message


@pytest.mark.parametrize("bad", ["", "a..b", 3])
def test_bad_output_key_is_a_config_error(bad: Any) -> None:
    with pytest.raises(TargetResolutionError, match="output_key"):
        resolve_target({"type": "callable", "ref": f"{FIXTURES}:upper", "output_key": bad})


def test_python_callable_target_takes_an_output_key() -> None:
    def app(question: str) -> dict[str, Any]:
        return {"result": {"text": question[::-1]}}

    run = run_evals(ROWS, CallableTarget(app, output_key="result.text"), progress=False)
    assert [r.output for r in run.results] == ["sirap", "emor"]


async def test_model_prompt_target_reports_usage_and_samples() -> None:
    model = ScriptedModel(["Paris", "Lyon", "Rome"])
    target = ModelPromptTarget("Capital of {{ input }}?", model, settings=ModelSettings(n=2))
    produced = await target.execute(Item(id="1", input="France"))
    assert produced.output == "Paris" and produced.samples == ["Paris", "Lyon"]
    assert produced.usage == Usage(input_tokens=3, output_tokens=2)
    single = await ModelPromptTarget("Capital of {{ input }}?", model).execute(
        Item(id="2", input="Italy")
    )
    assert single.output == "Rome" and single.samples is None and single.usage is not None
