"""Tests for the code trajectory scorers' computation (scorers.md §2.19, §2.20).

Besides the acceptance cases, the hand-built scenarios below carry values that were
cross-checked by running ``@mastra/evals@1.10.2`` under Node 20.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from assay.scorers._lib.trajectory_scoring import (
    NO_EXPECTED_TRAJECTORY_ERROR,
    js_number_to_string,
    resolve_static_expected_steps,
    resolve_weights,
    trajectory_accuracy,
    trajectory_accuracy_description,
    unified_trajectory,
)

CASES_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "scorer_cases.json"
TRAJECTORY_SCORERS = ("trajectory-accuracy-code", "trajectory-code")


def _load_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(CASES_PATH.read_text(encoding="utf-8"))
    return [case for case in cases if case["scorer"] in TRAJECTORY_SCORERS]


CASES = _load_cases()


def _canonical(value: Any) -> str:
    """Order-sensitive JSON text with JS number semantics (1.0 == 1), to compare key order."""

    def norm(x: Any) -> Any:
        if isinstance(x, float) and x.is_integer():
            return int(x)
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        if isinstance(x, list):
            return [norm(v) for v in x]
        return x

    return json.dumps(norm(value), ensure_ascii=False)


def _run_case(case: dict[str, Any]) -> tuple[dict[str, Any], float, str | None]:
    options = case["options"] or {}
    run_expected = case.get("expectedTrajectory")
    if case["scorer"] == "trajectory-accuracy-code":
        comparison = options.get("comparisonOptions") or {}
        preprocess, score = trajectory_accuracy(
            case["output"],
            options.get("expectedTrajectory"),
            run_expected,
            comparison.get("ordering", "relaxed"),
            comparison.get("allowRepeatedSteps", True),
        )
        return preprocess, score, None
    return unified_trajectory(
        case["output"], options.get("defaults"), options.get("weights"), run_expected
    )


def test_all_trajectory_cases_are_present() -> None:
    assert len(CASES) == 29


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_acceptance_case(case: dict[str, Any]) -> None:
    assert case["expected_error"] is None
    preprocess, score, reason = _run_case(case)
    assert abs(score - case["expected_score"]) <= case["tolerance"]
    reference = case.get("reference_step_results") or {}
    if "preprocessStepResult" in reference:
        assert preprocess == reference["preprocessStepResult"]
        assert _canonical(preprocess) == _canonical(reference["preprocessStepResult"])
    if "reason" in reference:
        assert reason == reference["reason"]


# ─── trajectory accuracy (code) ───


def tool(name: str, **fields: Any) -> dict[str, Any]:
    return {"stepType": "tool_call", "name": name, **fields}


def traj(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"steps": list(steps), **extra}


class TestTrajectoryAccuracy:
    def test_no_expectation_anywhere_scores_zero_with_error(self) -> None:
        actual = traj(tool("a"))
        preprocess, score = trajectory_accuracy(actual, None, None)
        assert score == 0
        assert preprocess == {
            "actualTrajectory": actual,
            "actualStepNames": ["a"],
            "expectedStepNames": [],
            "error": NO_EXPECTED_TRAJECTORY_ERROR,
        }
        assert NO_EXPECTED_TRAJECTORY_ERROR == (
            "No expected trajectory provided (pass via options or dataset item expectedTrajectory)"
        )

    def test_item_expectation_without_steps_is_no_expectation(self) -> None:
        preprocess, score = trajectory_accuracy(traj(tool("a")), None, {"ordering": "strict"})
        assert score == 0
        assert preprocess["error"] == NO_EXPECTED_TRAJECTORY_ERROR

    def test_falls_back_to_dataset_item_steps(self) -> None:
        item = {"steps": [{"name": "b"}, {"name": "a"}]}
        preprocess, score = trajectory_accuracy(traj(tool("a"), tool("b")), None, item)
        assert score == 0.5
        assert preprocess["expectedTrajectory"] == {"steps": item["steps"]}
        assert preprocess["expectedStepNames"] == ["b", "a"]

    def test_constructor_steps_win_over_item_steps(self) -> None:
        item = {"steps": [{"name": "zzz"}]}
        _, score = trajectory_accuracy(traj(tool("a")), [{"name": "a"}], item)
        assert score == 1

    def test_item_ordering_overrides_constructor(self) -> None:
        actual = traj(tool("a"), tool("b"), tool("c"))
        expected = [{"name": "a"}, {"name": "b"}]
        _, relaxed = trajectory_accuracy(actual, expected, None, "relaxed")
        _, strict = trajectory_accuracy(actual, expected, {"ordering": "strict"}, "relaxed")
        assert (relaxed, strict) == (1, 0.75)

    def test_item_allow_repeated_steps_overrides_constructor(self) -> None:
        actual = traj(tool("a"), tool("a"))
        expected = [{"name": "a"}]
        _, allowed = trajectory_accuracy(actual, expected, None, "relaxed", False)
        assert allowed == 0.9
        item = {"allowRepeatedSteps": True}
        _, overridden = trajectory_accuracy(actual, expected, item, "relaxed", False)
        assert overridden == 1

    def test_explicit_empty_list_means_expect_no_steps(self) -> None:
        assert trajectory_accuracy(traj(), [], {"steps": [{"name": "a"}]})[1] == 1
        assert trajectory_accuracy(traj(tool("a")), [], None)[1] == 0

    def test_static_trajectory_is_converted(self) -> None:
        recorded = traj(tool("a", durationMs=4, metadata={"k": 1}), totalDurationMs=4)
        preprocess, score = trajectory_accuracy(traj(tool("a")), recorded, None)
        assert score == 1
        assert preprocess["expectedTrajectory"] == {"steps": [tool("a")]}

    def test_resolve_static_expected_steps(self) -> None:
        assert resolve_static_expected_steps(None) is None
        assert resolve_static_expected_steps([]) == []
        with pytest.raises(TypeError):
            resolve_static_expected_steps({"no": "steps"})

    def test_description(self) -> None:
        assert trajectory_accuracy_description([{"name": "a"}, {"name": "b"}], "strict") == (
            "Evaluates whether the trajectory matches the expected path: [a → b] (strict ordering)"
        )
        assert trajectory_accuracy_description(None, "relaxed") == (
            "Evaluates trajectory accuracy against expected trajectory from dataset items "
            "(relaxed ordering)"
        )


# ─── unified trajectory scorer (code) ───


class TestUnifiedTrajectory:
    def test_weights_default_and_clamp(self) -> None:
        assert resolve_weights(None) == {
            "accuracy": 0.4,
            "efficiency": 0.3,
            "toolFailures": 0.2,
            "blacklist": 0.1,
        }
        clamped = resolve_weights({"accuracy": -1, "blacklist": 2})
        assert clamped == {"accuracy": 0, "efficiency": 0.3, "toolFailures": 0.2, "blacklist": 2}
        with pytest.raises(ValueError, match="accuracy weight"):
            resolve_weights({"accuracy": "heavy"})

    def test_negative_weight_removes_dimension(self) -> None:
        defaults = {"steps": [{"name": "x"}], "maxSteps": 5}  # accuracy 0, efficiency 1
        _, score, _ = unified_trajectory(traj(tool("a")), defaults, {"accuracy": -3})
        assert score == 1

    def test_all_weights_zero_give_one(self) -> None:
        defaults = {"steps": [{"name": "x"}]}
        _, score, _ = unified_trajectory(traj(tool("a")), defaults, {"accuracy": 0})
        assert score == 1

    def test_plain_rounding_without_epsilon(self) -> None:
        # level = 0.3/0.8 = 0.37499999999999994 → Math.round(x*100)/100 = 0.37 (round2 gives 0.38)
        defaults = {"steps": [{"name": "x"}], "maxSteps": 5}
        weights = {"accuracy": 0.5, "efficiency": 0.3}
        preprocess, score, reason = unified_trajectory(traj(tool("a")), defaults, weights)
        assert score == 0.37
        assert reason == (
            "Score: 0.37\n"
            "Accuracy (0): 0/1 expected steps matched. missing: x. extra: a.\n"
            "Efficiency (1): all budgets met, no redundant calls."
        )
        assert "blacklist" not in preprocess

    def test_item_expectation_merges_over_defaults(self) -> None:
        defaults = {"steps": [{"name": "x"}], "maxSteps": 1}
        item = {"steps": [{"name": "a"}], "blacklistedTools": ["zzz"]}
        preprocess, score, _ = unified_trajectory(traj(tool("a")), defaults, None, item)
        assert preprocess["config"] == {
            "steps": [{"name": "a"}],
            "maxSteps": 1,
            "blacklistedTools": ["zzz"],
        }
        assert list(preprocess) == ["accuracy", "efficiency", "blacklist", "toolFailures", "config"]
        assert score == 1

    def test_efficiency_activated_by_no_redundant_calls_false(self) -> None:
        preprocess, score, reason = unified_trajectory(
            traj(tool("s"), tool("s")), {"noRedundantCalls": False}
        )
        assert preprocess["efficiency"]["score"] == 1
        assert score == 1
        assert reason == "Score: 1\nEfficiency (1): all budgets met, no redundant calls."

    def test_null_budget_is_invalid(self) -> None:
        with pytest.raises(ValueError, match="Invalid maxSteps budget"):
            unified_trajectory(traj(tool("a")), {"maxSteps": None})

    def test_budgets_and_tool_failures_reason(self) -> None:
        generation = {
            "stepType": "model_generation",
            "name": "m",
            "promptTokens": 60,
            "completionTokens": 20,
            "children": [
                {
                    "stepType": "model_generation",
                    "name": "inner",
                    "promptTokens": 30,
                    "completionTokens": 10,
                }
            ],
        }
        actual = traj(
            generation,
            tool("s", success=False),
            tool("s", success=False),
            tool("f", success=True),
            totalDurationMs=75,
        )
        defaults = {"maxTotalTokens": 100, "maxTotalDurationMs": 50, "maxRetriesPerTool": 0}
        preprocess, score, reason = unified_trajectory(actual, defaults)
        # efficiency: mean(1 - 20/100, 1 - 25/50, 1 - 0.2) = 0.7; tool failures: 1 - 0.2 = 0.8
        # level: (0.3 * 0.7 + 0.2 * 0.8) / 0.5 = 0.74
        assert preprocess["efficiency"]["totalTokens"] == 120
        assert preprocess["toolFailures"]["patterns"][0]["alternativeTool"] == "f"
        assert score == 0.74
        assert reason == (
            "Score: 0.74\n"
            "Efficiency (0.7): over token budget (120 tokens). over duration budget (75ms). "
            "redundant calls: s.\n"
            "Tool failures (0.8): 1 total retries. excessive retries: s."
        )

    def test_tool_failures_without_patterns_are_inactive(self) -> None:
        preprocess, score, reason = unified_trajectory(traj(tool("s", success=False)), {})
        assert preprocess == {
            "toolFailures": {
                "score": 1,
                "patterns": [],
                "totalRetries": 0,
                "excessiveRetryTools": [],
            },
            "config": {},
        }
        assert (score, reason) == (1, "Score: 1")

    def test_blacklist_reason_lists_tools_and_sequences(self) -> None:
        defaults = {"blacklistedTools": ["b", "zz"], "blacklistedSequences": [["a", "b"], ["q"]]}
        _, score, reason = unified_trajectory(traj(tool("a"), tool("b")), defaults)
        assert score == 0
        assert reason == (
            "Score: 0\nBlacklist violation: forbidden tools used: b. forbidden sequences: a → b."
        )

    def test_nested_mix_and_missing_parent(self) -> None:
        defaults = {
            "steps": [
                {
                    "name": "p",
                    "stepType": "agent_run",
                    "children": {"steps": [{"name": "t1"}, {"name": "t2"}]},
                },
                {"name": "q", "children": {"steps": [{"name": "z"}]}},
            ]
        }
        actual = traj({"stepType": "agent_run", "name": "p", "children": [tool("t1")]})
        preprocess, score, reason = unified_trajectory(actual, defaults)
        nested = preprocess["nested"]
        assert [n["stepName"] for n in nested] == ["p", "q"]
        assert nested[0]["score"] == 0.5
        assert nested[1] == {
            "stepName": "q",
            "score": 0,
            "accuracy": {
                "score": 0,
                "matchedSteps": 0,
                "totalExpectedSteps": 1,
                "totalActualSteps": 0,
                "missingSteps": ["z"],
                "extraSteps": [],
                "outOfOrderSteps": [],
                "repeatedSteps": [],
            },
        }
        # level 0.5 (accuracy only); 0.7 * 0.5 + 0.3 * mean(0.5, 0) = 0.425 → 0.43
        assert score == 0.43
        assert reason == (
            "Score: 0.43\n"
            "Accuracy (0.5): 1/2 expected steps matched. missing: q.\n"
            "Nested scores: p: 0.5, q: 0."
        )

    def test_missing_parent_without_child_steps_has_no_accuracy_stub(self) -> None:
        defaults = {"steps": [{"name": "p", "children": {"maxSteps": 1}}]}
        preprocess, _, _ = unified_trajectory(traj(), defaults)
        assert preprocess["nested"] == [{"stepName": "p", "score": 0}]

    def test_nested_parent_step_type_must_match_and_is_claimed_once(self) -> None:
        child = {"steps": [{"name": "c"}]}
        defaults = {
            "steps": [
                {"name": "p", "stepType": "agent_run", "children": child},
                {"name": "p", "children": child},
            ]
        }
        actual = traj(
            tool("p", children=[tool("x")]),
            {"stepType": "agent_run", "name": "p", "children": [tool("c")]},
        )
        preprocess, _, _ = unified_trajectory(actual, defaults)
        # The typed expectation claims the agent_run (index 1); the untyped one gets the tool.
        assert [n["score"] for n in preprocess["nested"]] == [1, 0]

    def test_children_use_parent_duration(self) -> None:
        defaults = {"steps": [{"name": "p", "children": {"maxTotalDurationMs": 10}}]}
        actual = traj(tool("p", durationMs=20, children=[tool("c", durationMs=1)]))
        preprocess, _, _ = unified_trajectory(actual, defaults)
        efficiency = preprocess["nested"][0]["efficiency"]
        assert efficiency["totalDurationMs"] == 20
        assert efficiency["score"] == 0.5  # mean(1 - 10/10, redundancy 1)

    def test_deep_nested_blacklist_fails_everything(self) -> None:
        inner = {"blacklistedTools": ["bad"]}
        defaults = {
            "steps": [{"name": "p", "children": {"steps": [{"name": "c", "children": inner}]}}]
        }
        actual = traj(
            {
                "stepType": "agent_run",
                "name": "p",
                "children": [{"stepType": "agent_run", "name": "c", "children": [tool("bad")]}],
            }
        )
        preprocess, score, reason = unified_trajectory(actual, defaults)
        outer = preprocess["nested"][0]
        assert outer["score"] == 0
        assert outer["nested"][0]["blacklist"]["violatedTools"] == ["bad"]
        assert outer["nested"][0]["nested"] == []
        assert score == 0
        assert reason == "Score: 0\nNested blacklist violation in: p."

    def test_nested_levels_mix_recursively(self) -> None:
        # inner level (c): accuracy 1/2 → 0.5; middle (p): 0.7 * 1 + 0.3 * 0.5 = 0.85;
        # top: 0.7 * 1 + 0.3 * 0.85 = 0.955 → Math.round(95.5) / 100 = 0.96 (JS rounds half up)
        inner = {"steps": [{"name": "x"}, {"name": "y"}]}
        middle_config = {"steps": [{"name": "c", "children": inner}]}
        defaults = {"steps": [{"name": "p", "children": middle_config}]}
        actual = traj(tool("p", children=[tool("c", children=[tool("x")])]))
        preprocess, score, reason = unified_trajectory(actual, defaults)
        middle = preprocess["nested"][0]
        assert middle["nested"][0]["score"] == 0.5
        assert middle["score"] == 0.85
        assert score == 0.96
        assert reason == (
            "Score: 0.96\nAccuracy (1): 1/1 expected steps matched.\nNested scores: p: 0.85."
        )


class TestJsNumberToString:
    @pytest.mark.parametrize(
        ("value", "text"),
        [
            (1.0, "1"),
            (0, "0"),
            (-0.0, "0"),
            (0.37, "0.37"),
            (120, "120"),
            (100.5, "100.5"),
            (1e21, "1e+21"),
            (1e16, "10000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (-2.5, "-2.5"),
            (math.inf, "Infinity"),
            (math.nan, "NaN"),
        ],
    )
    def test_formats_like_javascript(self, value: float, text: str) -> None:
        assert js_number_to_string(value) == text
