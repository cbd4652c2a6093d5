"""The trajectory shapes (scorers.md §3.4): step matching, JSON equality, step conversion.

Expected values follow the reference formulas; the non-obvious ones were cross-checked by
running ``@mastra/evals@1.10.2`` under Node 20.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from assay.messages.trajectory import (
    js_stringify,
    json_equal,
    step_matches,
    trajectory_step_to_expected_step,
    trajectory_to_expected_steps,
)
from assay.scorers._lib.trajectory_checks import compare_trajectories


def tool(name: str, **fields: Any) -> dict[str, Any]:
    return {"stepType": "tool_call", "name": name, **fields}


def traj(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"steps": list(steps), **extra}


def names(*ns: str) -> dict[str, Any]:
    return traj(*(tool(n) for n in ns))


class TestStepMatching:
    def test_json_key_order_matters(self) -> None:
        actual = tool("s", toolArgs={"a": 1, "b": 2})
        assert step_matches(actual, tool("s", toolArgs={"a": 1, "b": 2}))
        assert not step_matches(actual, tool("s", toolArgs={"b": 2, "a": 1}))

    def test_js_numbers_and_integer_keys(self) -> None:
        # JS has one number type, and JSON.stringify puts integer-like keys first.
        assert json_equal({"n": 1}, {"n": 1.0})
        assert json_equal({"2": "x", "1": "y"}, {"1": "y", "2": "x"})
        assert not json_equal({"b": 1, "a": 2}, {"a": 2, "b": 1})
        assert js_stringify({"b": [1.5, None, True], "10": "é"}) == '{"10":"é","b":[1.5,null,true]}'
        assert js_stringify(math.nan) == "null"

    def test_unserialisable_values_never_match(self) -> None:
        assert not json_equal({1, 2}, {1, 2})

    def test_without_step_type_only_the_name_is_compared(self) -> None:
        assert step_matches(tool("s", toolArgs={"q": 1}), {"name": "s", "toolArgs": {"q": 2}})

    def test_step_type_must_equal(self) -> None:
        actual = tool("gpt4")
        assert not step_matches(actual, {"stepType": "model_generation", "name": "gpt4"})
        result = compare_trajectories(
            traj(actual), traj({"stepType": "model_generation", "name": "gpt4"})
        )
        assert result["score"] == 0
        assert result["outOfOrderSteps"] == ["gpt4"]

    def test_expected_field_absent_on_actual_fails(self) -> None:
        assert not step_matches(tool("s"), tool("s", toolResult={"count": 5}))

    def test_expected_null_is_compared_not_skipped(self) -> None:
        assert not step_matches(tool("s"), tool("s", toolResult=None))
        assert step_matches(tool("s", toolResult=None), tool("s", toolResult=None))

    def test_fields_not_present_on_expected_are_ignored(self) -> None:
        assert step_matches(tool("s", toolArgs={"q": 1}, success=False), tool("s"))

    def test_success_is_compared_for_tool_calls(self) -> None:
        assert not step_matches(tool("s", success=False), tool("s", success=True))

    def test_only_fields_of_the_expected_type_are_compared(self) -> None:
        actual = {"stepType": "agent_run", "name": "r", "agentId": "x", "toolArgs": {"a": 1}}
        assert step_matches(actual, {**actual, "toolArgs": {"a": 2}})
        assert not step_matches(actual, {**actual, "agentId": "y"})

    @pytest.mark.parametrize(
        ("step_type", "field", "value", "other"),
        [
            ("mcp_tool_call", "mcpServer", "srv-a", "srv-b"),
            ("model_generation", "modelId", "gpt", "claude"),
            ("model_generation", "promptTokens", 10, 11),
            ("workflow_step", "output", {"x": 1}, {"x": 2}),
            ("workflow_run", "status", "success", "failed"),
            ("workflow_conditional", "selectedSteps", ["a"], ["b"]),
            ("workflow_parallel", "branchCount", 2, 3),
            ("workflow_loop", "totalIterations", 2, 3),
            ("workflow_sleep", "sleepType", "fixed", "until"),
            ("workflow_wait_event", "eventReceived", True, False),
            ("processor_run", "processorId", "p1", "p2"),
        ],
    )
    def test_variant_fields_are_compared(
        self, step_type: str, field: str, value: Any, other: Any
    ) -> None:
        actual = {"stepType": step_type, "name": "n", field: value}
        assert step_matches(actual, {"stepType": step_type, "name": "n", field: value})
        assert not step_matches(actual, {"stepType": step_type, "name": "n", field: other})


# ─── conversion helpers ───


class TestConversion:
    def test_runtime_fields_dropped_and_children_nested(self) -> None:
        step = {
            "stepType": "agent_run",
            "name": "agent",
            "durationMs": 12,
            "metadata": {"x": 1},
            "children": [tool("t", toolArgs={"a": 1}, durationMs=3, children=[])],
            "agentId": "a1",
        }
        assert trajectory_step_to_expected_step(step) == {
            "stepType": "agent_run",
            "name": "agent",
            "agentId": "a1",
            "children": {"steps": [{"stepType": "tool_call", "name": "t", "toolArgs": {"a": 1}}]},
        }
        assert list(trajectory_step_to_expected_step(step)) == [
            "stepType",
            "name",
            "agentId",
            "children",
        ]

    def test_non_list_children_are_dropped(self) -> None:
        step = {"name": "x", "children": {"steps": [{"name": "y"}]}}
        assert trajectory_step_to_expected_step(step) == {"name": "x"}

    def test_trajectory_to_expected_steps(self) -> None:
        trajectory = traj(tool("a", durationMs=1), tool("b"), totalDurationMs=5)
        assert trajectory_to_expected_steps(trajectory) == [tool("a"), tool("b")]
