"""Trajectory scoring (scorers.md §3.4): comparison, efficiency, blacklist, tool failures.

Expected values follow the reference formulas; the non-obvious ones were cross-checked by
running ``@mastra/evals@1.10.2`` under Node 20.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from assay.scorers._lib.trajectory_checks import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
    compare_trajectories,
)
from tests.messages.test_trajectory import names, tool, traj

# ─── compare_trajectories: ordering modes ───


class TestStrict:
    def test_exact_sequence_scores_one(self) -> None:
        result = compare_trajectories(names("a", "b"), names("a", "b"), ordering="strict")
        assert result["score"] == 1
        assert result["matchedSteps"] == 2
        assert result["missingSteps"] == []

    def test_extra_step_penalty_is_half_the_relative_overshoot(self) -> None:
        # 2/2 matched, one extra step: 1 - 0.5 * (3 - 2) / 2 = 0.75
        result = compare_trajectories(names("a", "b", "c"), names("a", "b"), ordering="strict")
        assert result["score"] == 0.75
        assert result["extraSteps"] == ["c"]

    def test_extra_penalty_grows_with_overshoot(self) -> None:
        # 1 - 0.5 * (4 - 2) / 2 = 0.5
        result = compare_trajectories(names("a", "b", "x", "y"), names("a", "b"), ordering="strict")
        assert result["score"] == 0.5

    def test_reversed_order_matches_nothing_and_reports_out_of_order(self) -> None:
        result = compare_trajectories(names("b", "a"), names("a", "b"), ordering="strict")
        assert result["score"] == 0
        assert result["outOfOrderSteps"] == ["b", "a"]
        assert result["missingSteps"] == ["a", "b"]

    def test_unknown_name_at_a_position_is_not_out_of_order(self) -> None:
        result = compare_trajectories(names("a", "z"), names("a", "b"), ordering="strict")
        assert result["outOfOrderSteps"] == []
        assert result["extraSteps"] == ["z"]
        assert result["score"] == 0.5

    def test_missing_tail(self) -> None:
        result = compare_trajectories(names("a"), names("a", "b"), ordering="strict")
        assert result["score"] == 0.5
        assert result["missingSteps"] == ["b"]

    def test_same_name_with_mismatching_data_is_missing(self) -> None:
        actual = traj(tool("a", toolArgs={"q": 1}))
        expected = traj(tool("a", toolArgs={"q": 2}))
        result = compare_trajectories(actual, expected, ordering="strict")
        assert result["matchedSteps"] == 0
        assert result["missingSteps"] == ["a"]
        assert result["outOfOrderSteps"] == []


class TestRelaxed:
    def test_is_the_default(self) -> None:
        assert compare_trajectories(names("b", "a"), names("a", "b"))["outOfOrderSteps"] == ["b"]

    def test_extra_steps_between_are_free(self) -> None:
        result = compare_trajectories(names("a", "x", "b"), names("a", "b"))
        assert result["score"] == 1
        assert result["extraSteps"] == ["x"]

    def test_out_of_order_step_is_unmatched_and_reported(self) -> None:
        result = compare_trajectories(names("b", "a"), names("a", "b"), ordering="relaxed")
        assert result["score"] == 0.5
        assert result["missingSteps"] == ["b"]
        assert result["outOfOrderSteps"] == ["b"]

    def test_search_continues_after_last_match(self) -> None:
        # "b" is found at index 2 even though index 1 is another name.
        result = compare_trajectories(names("a", "c", "b", "c"), names("a", "b", "c"))
        assert result["matchedSteps"] == 3

    def test_unknown_ordering_falls_back_to_relaxed(self) -> None:
        weird = compare_trajectories(names("b", "a"), names("a", "b"), ordering="sideways")
        assert weird == compare_trajectories(names("b", "a"), names("a", "b"))

    def test_data_mismatch_counts_as_out_of_order_when_name_present(self) -> None:
        actual = traj(tool("search", toolArgs={"query": "different"}))
        expected = traj(tool("search", toolArgs={"query": "test"}))
        result = compare_trajectories(actual, expected)
        assert result["score"] == 0
        assert result["outOfOrderSteps"] == ["search"]


class TestUnordered:
    def test_any_order_matches(self) -> None:
        result = compare_trajectories(names("c", "b", "a"), names("a", "b", "c"), "unordered")
        assert result["score"] == 1
        assert result["outOfOrderSteps"] == []

    def test_each_actual_step_is_used_once(self) -> None:
        result = compare_trajectories(names("a"), names("a", "a"), ordering="unordered")
        assert result["matchedSteps"] == 1
        assert result["missingSteps"] == ["a"]
        assert result["score"] == 0.5

    def test_third_of_three_rounds(self) -> None:
        result = compare_trajectories(names("a"), names("a", "b", "c"), ordering="unordered")
        assert result["score"] == 0.33


class TestRepeatsAndEmpty:
    def test_repeated_steps_listed_in_first_seen_order(self) -> None:
        result = compare_trajectories(names("b", "a", "b", "a", "c"), names("a"))
        assert result["repeatedSteps"] == ["b", "a"]
        assert result["score"] == 1  # repeats allowed by default

    @pytest.mark.parametrize("ordering", ["strict", "relaxed", "unordered"])
    def test_repeats_cost_a_tenth_each_when_disallowed(self, ordering: str) -> None:
        actual = names("a", "a", "b", "b")
        expected = names("a", "a", "b", "b")
        result = compare_trajectories(actual, expected, ordering, allow_repeated_steps=False)
        assert result["score"] == 0.8

    def test_repeat_penalty_clamps_at_zero(self) -> None:
        actual = names("a", "a", "b", "b", "c", "c")
        result = compare_trajectories(actual, names("z"), allow_repeated_steps=False)
        assert result["score"] == 0

    def test_empty_expectation_matches_only_empty_trajectory(self) -> None:
        assert compare_trajectories(traj(), traj())["score"] == 1
        result = compare_trajectories(names("a", "b"), traj())
        assert result["score"] == 0
        assert result["extraSteps"] == ["a", "b"]
        assert result["totalExpectedSteps"] == 0

    def test_bare_list_expectation_is_accepted(self) -> None:
        assert compare_trajectories(names("a"), [{"name": "a"}])["score"] == 1

    def test_result_keys_in_reference_order(self) -> None:
        assert list(compare_trajectories(names("a"), names("a"))) == [
            "score",
            "matchedSteps",
            "totalExpectedSteps",
            "totalActualSteps",
            "missingSteps",
            "extraSteps",
            "outOfOrderSteps",
            "repeatedSteps",
        ]

    def test_trajectory_without_steps_is_rejected(self) -> None:
        with pytest.raises(TypeError):
            compare_trajectories({"nope": []}, names("a"))


# ─── step matching and JSON equality ───


# ─── efficiency ───


def gen(name: str, prompt: Any = 10, completion: Any = 5, **extra: Any) -> dict[str, Any]:
    return {
        "stepType": "model_generation",
        "name": name,
        "promptTokens": prompt,
        "completionTokens": completion,
        **extra,
    }


class TestEfficiency:
    def test_no_budgets_and_no_redundancy_is_one(self) -> None:
        result = check_trajectory_efficiency(names("a", "b"))
        assert result == {
            "score": 1,
            "totalSteps": 2,
            "overStepBudget": False,
            "totalTokens": 0,
            "overTokenBudget": False,
            "totalDurationMs": 0,
            "overDurationBudget": False,
            "redundantCalls": [],
        }

    def test_step_budget_overshoot_is_linear(self) -> None:
        # budget 2, 3 steps: 1 - 1/2 = 0.5 (averaged with the redundancy dimension: 1)
        result = check_trajectory_efficiency(names("a", "b", "c"), max_steps=2)
        assert result["overStepBudget"] is True
        assert result["score"] == 0.75
        only = check_trajectory_efficiency(
            names("a", "b", "c"), max_steps=2, no_redundant_calls=False
        )
        assert only["score"] == 0.5

    def test_zero_budget_overshoot_scores_zero(self) -> None:
        result = check_trajectory_efficiency(names("a"), max_steps=0, no_redundant_calls=False)
        assert result["score"] == 0

    def test_tokens_sum_nested_model_generations(self) -> None:
        inner = gen("inner", 30, 10)
        outer = gen("outer", 60, 20, children=[tool("t", children=[inner])])
        result = check_trajectory_efficiency(
            traj(outer, gen("last", 1, 2)), max_total_tokens=100, no_redundant_calls=False
        )
        assert result["totalTokens"] == 123
        assert result["overTokenBudget"] is True
        assert result["score"] == 0.77  # 1 - 23/100

    def test_tokens_reported_without_budget(self) -> None:
        assert check_trajectory_efficiency(traj(gen("g", 3, 4)))["totalTokens"] == 7

    def test_token_budget_needs_complete_counts(self) -> None:
        with pytest.raises(ValueError, match='model generation "g" has missing or invalid'):
            check_trajectory_efficiency(traj(gen("g", 3, None)), max_total_tokens=10)
        with pytest.raises(ValueError, match="missing model-generation measurements"):
            check_trajectory_efficiency(names("a"), max_total_tokens=10)

    def test_duration_prefers_total_over_step_sum(self) -> None:
        steps = (tool("a", durationMs=30), tool("b", durationMs=40))
        assert check_trajectory_efficiency(traj(*steps))["totalDurationMs"] == 70
        declared = check_trajectory_efficiency(
            traj(*steps, totalDurationMs=50), max_total_duration_ms=40, no_redundant_calls=False
        )
        assert declared["totalDurationMs"] == 50
        assert declared["score"] == 0.75  # 1 - 10/40

    def test_duration_budget_needs_measurements(self) -> None:
        with pytest.raises(ValueError, match="Cannot evaluate duration budget"):
            check_trajectory_efficiency(
                traj(tool("a", durationMs=3), tool("b")), max_total_duration_ms=10
            )
        with pytest.raises(ValueError, match="Cannot evaluate duration budget"):
            check_trajectory_efficiency(traj(), max_total_duration_ms=10)
        with pytest.raises(ValueError, match="Cannot evaluate duration budget"):
            check_trajectory_efficiency(
                traj(tool("a", durationMs=3), totalDurationMs=None), max_total_duration_ms=10
            )

    @pytest.mark.parametrize("bad", [-1, math.inf, math.nan, True, "5"])
    @pytest.mark.parametrize("which", ["max_steps", "max_total_tokens", "max_total_duration_ms"])
    def test_invalid_budgets_raise(self, which: str, bad: Any) -> None:
        with pytest.raises(ValueError, match="budget: expected a finite nonnegative number"):
            check_trajectory_efficiency(traj(gen("g")), **{which: bad})

    def test_redundant_calls_are_consecutive_identical_tool_calls(self) -> None:
        steps = (
            tool("s", toolArgs={"q": 1}),
            tool("s", toolArgs={"q": 1}),  # redundant (index 1)
            tool("s", toolArgs={"q": 2}),
            tool("t", toolArgs={"q": 2}),
            tool("s", toolArgs={"q": 2}),  # not consecutive with the other {"q": 2}
            tool("s"),
            tool("s"),  # both without args: redundant (index 6)
        )
        result = check_trajectory_efficiency(traj(*steps))
        assert result["redundantCalls"] == [{"name": "s", "index": 1}, {"name": "s", "index": 6}]
        assert result["score"] == 0.6  # 1 - 2 * 0.2

    def test_redundancy_is_key_order_sensitive_and_tool_only(self) -> None:
        reordered = traj(tool("s", toolArgs={"a": 1, "b": 2}), tool("s", toolArgs={"b": 2, "a": 1}))
        assert check_trajectory_efficiency(reordered)["redundantCalls"] == []
        generations = traj(gen("g"), gen("g"))
        assert check_trajectory_efficiency(generations)["redundantCalls"] == []
        mcp = traj(
            {"stepType": "mcp_tool_call", "name": "m", "toolArgs": {}},
            {"stepType": "mcp_tool_call", "name": "m", "toolArgs": {}},
        )
        assert check_trajectory_efficiency(mcp)["redundantCalls"] == [{"name": "m", "index": 1}]

    def test_redundancy_check_can_be_disabled(self) -> None:
        result = check_trajectory_efficiency(names("s", "s"), no_redundant_calls=False)
        assert result["redundantCalls"] == []
        assert result["score"] == 1

    def test_score_is_mean_of_dimensions_rounded(self) -> None:
        # steps: 1 - (4 - 3)/3 = 0.666…; redundancy: 1 → mean 0.8333… → 0.83
        result = check_trajectory_efficiency(names("a", "b", "c", "d"), max_steps=3)
        assert result["score"] == 0.83


# ─── blacklist ───


class TestBlacklist:
    def test_forbidden_tool(self) -> None:
        result = check_trajectory_blacklist(
            names("search", "deleteAll"), blacklisted_tools=["deleteAll", "drop"]
        )
        assert result == {"score": 0, "violatedTools": ["deleteAll"], "violatedSequences": []}

    def test_sequences_must_be_contiguous(self) -> None:
        gap = check_trajectory_blacklist(names("a", "x", "b"), blacklisted_sequences=[["a", "b"]])
        assert gap["score"] == 1
        hit = check_trajectory_blacklist(names("x", "a", "b"), blacklisted_sequences=[["a", "b"]])
        assert hit == {"score": 0, "violatedTools": [], "violatedSequences": [["a", "b"]]}

    def test_sequence_reported_once_and_empty_ignored(self) -> None:
        result = check_trajectory_blacklist(
            names("a", "b", "a", "b"), blacklisted_sequences=[[], ["a", "b"]]
        )
        assert result["violatedSequences"] == [["a", "b"]]

    def test_longer_sequence_than_trajectory(self) -> None:
        result = check_trajectory_blacklist(names("a"), blacklisted_sequences=[["a", "b"]])
        assert result["score"] == 1

    def test_only_top_level_names_are_checked(self) -> None:
        nested = traj(tool("agent", children=[tool("deleteAll")]))
        assert check_trajectory_blacklist(nested, blacklisted_tools=["deleteAll"])["score"] == 1

    def test_clean_trajectory(self) -> None:
        assert check_trajectory_blacklist(names("a")) == {
            "score": 1,
            "violatedTools": [],
            "violatedSequences": [],
        }


# ─── tool failures ───


class TestToolFailures:
    def test_no_tool_calls(self) -> None:
        result = analyze_tool_failures(traj(gen("g")))
        assert result == {"score": 1, "patterns": [], "totalRetries": 0, "excessiveRetryTools": []}

    def test_retries_counted_after_failures(self) -> None:
        steps = (tool("s", success=False), tool("s", success=False), tool("s", success=True))
        result = analyze_tool_failures(traj(*steps), max_retries_per_tool=1)
        assert result == {
            "score": 0.8,  # one retry over the limit
            "patterns": [
                {
                    "toolName": "s",
                    "retryCount": 2,
                    "fellBackToAlternative": False,
                    "eventuallySucceeded": True,
                }
            ],
            "totalRetries": 2,
            "excessiveRetryTools": ["s"],
        }

    def test_fallback_to_alternative_after_failing(self) -> None:
        steps = (tool("s", success=False), tool("s", success=False), tool("alt", success=True))
        (pattern,) = analyze_tool_failures(traj(*steps))["patterns"]
        assert pattern == {
            "toolName": "s",
            "retryCount": 1,
            "fellBackToAlternative": True,
            "alternativeTool": "alt",
            "eventuallySucceeded": False,
        }
        assert list(pattern) == [
            "toolName",
            "retryCount",
            "fellBackToAlternative",
            "alternativeTool",
            "eventuallySucceeded",
        ]

    def test_only_explicit_false_is_a_failure(self) -> None:
        steps = (tool("s"), tool("s", success=None), tool("s", success=True))
        assert analyze_tool_failures(traj(*steps))["patterns"] == []

    def test_non_tool_steps_do_not_split_groups(self) -> None:
        steps = (tool("s", success=False), gen("think"), tool("s", success=True))
        result = analyze_tool_failures(traj(*steps))
        assert result["totalRetries"] == 1
        assert result["patterns"][0]["eventuallySucceeded"] is True

    def test_each_group_is_separate(self) -> None:
        steps = (
            tool("s", success=False),
            tool("s", success=True),
            tool("t", success=False),
            tool("t", success=False),
            tool("t", success=False),
            tool("s", success=False),
            tool("s", success=False),
        )
        result = analyze_tool_failures(traj(*steps), max_retries_per_tool=0)
        assert [(p["toolName"], p["retryCount"]) for p in result["patterns"]] == [
            ("s", 1),
            ("t", 2),
            ("s", 1),
        ]
        assert result["totalRetries"] == 4
        assert result["excessiveRetryTools"] == ["s", "t", "s"]
        assert result["score"] == 0.2  # 1 - 4 * 0.2

    def test_score_floor_is_zero(self) -> None:
        steps = [tool("s", success=False) for _ in range(10)]
        assert analyze_tool_failures(traj(*steps), max_retries_per_tool=0)["score"] == 0
