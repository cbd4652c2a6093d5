"""Scoring logic of the two code trajectory scorers (reference ``scorers.md`` §2.19, §2.20).

Pure functions ported from ``src/scorers/code/trajectory/index.ts`` of
``@mastra/evals@1.10.2``: ``createTrajectoryAccuracyScorerCode`` (id
``code-trajectory-accuracy-scorer``) and ``createTrajectoryScorerCode`` (id
``code-trajectory-scorer``). The scorer classes only wire these into the scorer pipeline, so
the results here (``preprocessStepResult`` dicts, scores, reason text) are what the reference
produces for the same JSON input. Keys whose JS value would be ``undefined`` are left out of the
result dicts, mirroring what ``JSON.stringify`` of the reference result shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypedDict

from assay.messages.tool_calls import extract_trajectory
from assay.messages.trajectory import js_truthy, trajectory_steps, trajectory_to_expected_steps
from assay.rounding import round2_plain
from assay.scorers._lib.trajectory_checks import (
    ToolFailureAnalysisResult,
    TrajectoryBlacklistResult,
    TrajectoryComparisonResult,
    TrajectoryEfficiencyResult,
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
    compare_trajectories,
)
from assay.scorers._lib.trajectory_params import TrajectoryExpectation

__all__ = [
    "DEFAULT_WEIGHTS",
    "NO_EXPECTED_TRAJECTORY_ERROR",
    "TrajectoryWeights",
    "js_number_to_string",
    "resolve_static_expected_steps",
    "resolve_weights",
    "trajectory_accuracy",
    "trajectory_accuracy_description",
    "unified_trajectory",
]

NO_EXPECTED_TRAJECTORY_ERROR: Final = (
    "No expected trajectory provided (pass via options or dataset item expectedTrajectory)"
)


class TrajectoryWeights(TypedDict):
    """Dimension weights of the unified scorer (normalised over the active dimensions)."""

    accuracy: float
    efficiency: float
    toolFailures: float
    blacklist: float


DEFAULT_WEIGHTS: Final[TrajectoryWeights] = {
    "accuracy": 0.4,
    "efficiency": 0.3,
    "toolFailures": 0.2,
    "blacklist": 0.1,
}

_EFFICIENCY_KEYS: Final = ("maxSteps", "maxTotalTokens", "maxTotalDurationMs", "noRedundantCalls")


# ─── JS formatting helpers (for the reason text) ───


def js_number_to_string(value: float) -> str:
    """``String(x)`` for a JS number: ``1`` not ``1.0``, ``1e-7`` not ``1e-07``, etc.

    The reason text interpolates scores and measurements with template literals, so the
    Python float formatting would make every ``Score: 1`` read ``Score: 1.0``.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 10**21:
        return str(value)
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac = mantissa.partition(".")
    raw = (int_part + frac).lstrip("0")
    digits = raw.rstrip("0")
    # value = int(digits) * 10**(n - k)  (ECMAScript Number::toString notation)
    k = len(digits)
    n = (int(exp_text) if exp_text else 0) - len(frac) + (len(raw) - k) + k
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        exp_str = ("+" if exponent >= 0 else "-") + str(abs(exponent))
        text = digits + "e" + exp_str if k == 1 else digits[0] + "." + digits[1:] + "e" + exp_str
    return sign + text


def _js_str(value: object) -> str:
    """``String(x)`` as used by ``Array.join`` (null/undefined become the empty string)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return js_number_to_string(value)
    if isinstance(value, list | tuple):
        return ",".join(_js_str(v) for v in value)
    return str(value)


def _join(values: Sequence[Any], sep: str) -> str:
    return sep.join(_js_str(v) for v in values)


# ─── Trajectory accuracy (code) — §2.19 ───


def resolve_static_expected_steps(expected: object) -> list[Any] | None:
    """Normalise the constructor's ``expectedTrajectory`` into expected steps.

    A list is used as-is (an explicit ``[]`` means "expect no steps", not "unset"); a
    ``Trajectory`` has its steps converted (runtime fields dropped, children nested).
    """
    if expected is None:
        return None
    if isinstance(expected, list | tuple):
        return list(expected)
    return trajectory_to_expected_steps(expected)


def trajectory_accuracy_description(expected_steps: Sequence[Any] | None, ordering: str) -> str:
    """The reference scorer description for a static or dataset-driven expectation."""
    if expected_steps is not None:
        names = " → ".join(_js_str(_field(s, "name")) for s in expected_steps)
        return (
            f"Evaluates whether the trajectory matches the expected path: [{names}] "
            f"({ordering} ordering)"
        )
    return (
        "Evaluates trajectory accuracy against expected trajectory from dataset items "
        f"({ordering} ordering)"
    )


def _field(obj: object, key: str) -> Any:
    """``obj?.[key] ?? None`` for JSON-shaped input."""
    return obj.get(key) if isinstance(obj, Mapping) else None


def _step_names(steps: Sequence[Any]) -> list[Any]:
    return [_field(step, "name") for step in steps]


def trajectory_accuracy(
    actual_trajectory: object,
    expected_steps_or_trajectory: object = None,
    run_expected_trajectory: object = None,
    ordering: str | None = "relaxed",
    allow_repeated_steps: object = True,
) -> tuple[dict[str, Any], float]:
    """Preprocess result and score of ``createTrajectoryAccuracyScorerCode``.

    Expected steps come from the constructor (``expected_steps_or_trajectory``: a Trajectory or
    a list of expected steps) or else from the dataset item's ``run.expectedTrajectory.steps``.
    The item's ``ordering`` / ``allowRepeatedSteps`` override the constructor values even when
    the steps come from the constructor. Without any expected steps the score is 0 and the
    result carries the reference's ``error`` message.
    """
    actual_steps = trajectory_steps(actual_trajectory)
    expected_steps = resolve_static_expected_steps(expected_steps_or_trajectory)
    # JS objects are truthy even when empty, so any item expectation object is consulted.
    item = run_expected_trajectory if isinstance(run_expected_trajectory, Mapping) else None
    if expected_steps is None and item is not None:
        item_steps = item.get("steps")
        expected_steps = list(item_steps) if isinstance(item_steps, list | tuple) else None

    if expected_steps is None:
        return (
            {
                "actualTrajectory": actual_trajectory,
                "actualStepNames": _step_names(actual_steps),
                "expectedStepNames": [],
                "error": NO_EXPECTED_TRAJECTORY_ERROR,
            },
            0.0,
        )

    effective_ordering = ordering
    effective_allow: object = allow_repeated_steps
    if item is not None:
        if item.get("ordering") is not None:
            effective_ordering = item["ordering"]
        if item.get("allowRepeatedSteps") is not None:
            effective_allow = item["allowRepeatedSteps"]

    comparison = compare_trajectories(
        actual_trajectory,
        {"steps": expected_steps},
        ordering=effective_ordering,
        allow_repeated_steps=effective_allow,
    )
    result: dict[str, Any] = {
        "actualTrajectory": actual_trajectory,
        "expectedTrajectory": {"steps": expected_steps},
        "comparison": comparison,
        "actualStepNames": _step_names(actual_steps),
        "expectedStepNames": _step_names(expected_steps),
    }
    return result, float(comparison["score"])


# ─── Unified trajectory scorer (code) — §2.20 ───


def resolve_weights(weights: Mapping[str, Any] | None = None) -> TrajectoryWeights:
    """Fill in default weights and clamp negatives to 0 (``Math.max(0, w ?? default)``).

    Non-numeric or non-finite weights raise ``ValueError``: the reference would silently turn
    every score into NaN.
    """
    given: Mapping[str, Any] = weights or {}

    def pick(key: str, default: float) -> float:
        value = given.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"Invalid {key} weight: expected a number, got {value!r}")
        if math.isnan(value):
            raise ValueError(f"Invalid {key} weight: NaN")
        return max(0, value)

    return {
        "accuracy": pick("accuracy", DEFAULT_WEIGHTS["accuracy"]),
        "efficiency": pick("efficiency", DEFAULT_WEIGHTS["efficiency"]),
        "toolFailures": pick("toolFailures", DEFAULT_WEIGHTS["toolFailures"]),
        "blacklist": pick("blacklist", DEFAULT_WEIGHTS["blacklist"]),
    }


def _budget(config: Mapping[str, Any], key: str) -> float | None:
    """A budget from an expectation: absent → None; JSON null → invalid, as in the reference."""
    if key not in config:
        return None
    value = config[key]
    if value is None:
        raise ValueError(f"Invalid {key} budget: expected a finite nonnegative number")
    return value  # type: ignore[no-any-return]  # validated by check_trajectory_efficiency


def _non_empty_list(value: object) -> bool:
    return isinstance(value, list | tuple) and len(value) > 0


class _Dimensions(TypedDict, total=False):
    accuracy: TrajectoryComparisonResult
    efficiency: TrajectoryEfficiencyResult
    blacklist: TrajectoryBlacklistResult
    toolFailures: ToolFailureAnalysisResult


def _evaluate_dimensions(trajectory: Mapping[str, Any], config: Mapping[str, Any]) -> _Dimensions:
    """The four dimensions of one level: each only when the expectation activates it."""
    dims: _Dimensions = {}
    steps = config.get("steps")
    if js_truthy(steps):
        ordering = config.get("ordering")
        allow = config.get("allowRepeatedSteps")
        dims["accuracy"] = compare_trajectories(
            trajectory,
            {"steps": steps},
            ordering="relaxed" if ordering is None else ordering,
            allow_repeated_steps=True if allow is None else allow,
        )
    if any(key in config for key in _EFFICIENCY_KEYS):
        no_redundant = config.get("noRedundantCalls")
        dims["efficiency"] = check_trajectory_efficiency(
            trajectory,
            max_steps=_budget(config, "maxSteps"),
            max_total_tokens=_budget(config, "maxTotalTokens"),
            max_total_duration_ms=_budget(config, "maxTotalDurationMs"),
            no_redundant_calls=js_truthy(True if no_redundant is None else no_redundant),
        )
    tools, sequences = config.get("blacklistedTools"), config.get("blacklistedSequences")
    if _non_empty_list(tools) or _non_empty_list(sequences):
        dims["blacklist"] = check_trajectory_blacklist(
            trajectory,
            blacklisted_tools=tools if isinstance(tools, list | tuple) else None,
            blacklisted_sequences=sequences if isinstance(sequences, list | tuple) else None,
        )
    retries = config.get("maxRetriesPerTool")
    dims["toolFailures"] = analyze_tool_failures(
        trajectory, max_retries_per_tool=2 if retries is None else retries
    )
    return dims


def _weighted_level_score(dims: _Dimensions, weights: TrajectoryWeights) -> tuple[float, bool]:
    """Weighted mean of the active dimensions; returns (score, any dimension active)."""
    scores: list[tuple[float, float]] = []
    if "accuracy" in dims:
        scores.append((weights["accuracy"], dims["accuracy"]["score"]))
    if "efficiency" in dims:
        scores.append((weights["efficiency"], dims["efficiency"]["score"]))
    if "toolFailures" in dims and dims["toolFailures"]["patterns"]:
        scores.append((weights["toolFailures"], dims["toolFailures"]["score"]))
    if "blacklist" in dims:
        scores.append((weights["blacklist"], dims["blacklist"]["score"]))
    if not scores:
        return 1, False
    total_weight: float = 0
    for weight, _ in scores:
        total_weight = total_weight + weight
    if not total_weight > 0:
        return 1, True
    level: float = 0
    for weight, value in scores:  # left-to-right, exactly like the reference's reduce
        level = level + (weight / total_weight) * value
    return level, True


def _has_blacklist_violation(results: Sequence[Mapping[str, Any]]) -> bool:
    for result in results:
        blacklist = result.get("blacklist")
        if blacklist is not None and blacklist["score"] == 0:
            return True
        if _has_blacklist_violation(result.get("nested") or []):
            return True
    return False


def _mean_score(results: Sequence[Mapping[str, Any]]) -> float:
    total: float = 0
    for result in results:
        total = total + result["score"]
    return total / len(results)


def _evaluate_nested(
    expected_steps: Sequence[Any], actual_steps: Sequence[Any], weights: TrajectoryWeights
) -> list[dict[str, Any]]:
    """Evaluate ``children`` expectations against the children of the matching actual steps.

    Each expected step with ``children`` claims the first unclaimed actual step with the same
    name (and stepType, if given). A missing parent scores 0; otherwise the children are scored
    like a top-level trajectory (the parent's duration is their total duration), recursively.
    """
    results: list[dict[str, Any]] = []
    claimed: set[int] = set()
    for expected_step in expected_steps:
        children_config = _field(expected_step, "children")
        if not js_truthy(children_config):
            continue
        child_config: Mapping[str, Any] = (
            children_config if isinstance(children_config, Mapping) else {}
        )
        name = _field(expected_step, "name")
        step_type = _field(expected_step, "stepType")
        match_index = next(
            (
                i
                for i, step in enumerate(actual_steps)
                if i not in claimed
                and _field(step, "name") == name
                and (not js_truthy(step_type) or _field(step, "stepType") == step_type)
            ),
            -1,
        )
        if match_index < 0:
            missing: dict[str, Any] = {"stepName": name, "score": 0}
            child_steps = child_config.get("steps")
            if isinstance(child_steps, list | tuple) and len(child_steps) > 0:
                missing["accuracy"] = {
                    "score": 0,
                    "matchedSteps": 0,
                    "totalExpectedSteps": len(child_steps),
                    "totalActualSteps": 0,
                    "missingSteps": _step_names(child_steps),
                    "extraSteps": [],
                    "outOfOrderSteps": [],
                    "repeatedSteps": [],
                }
            results.append(missing)
            continue
        claimed.add(match_index)
        actual_step = actual_steps[match_index]

        child_trajectory: dict[str, Any] = {"steps": _field(actual_step, "children") or []}
        if isinstance(actual_step, Mapping) and "durationMs" in actual_step:
            child_trajectory["totalDurationMs"] = actual_step["durationMs"]
        dims = _evaluate_dimensions(child_trajectory, child_config)
        expected_children = child_config.get("steps")
        nested = (
            _evaluate_nested(expected_children, trajectory_steps(child_trajectory), weights)
            if js_truthy(expected_children) and isinstance(expected_children, list | tuple)
            else []
        )

        entry: dict[str, Any] = {"stepName": name, "score": 0, **dims}
        # Hard fail: a blacklist violation at this level or below zeroes this nested result.
        if "blacklist" in dims and dims["blacklist"]["score"] == 0:
            results.append(_ordered_nested(entry, nested))
            continue
        level, _ = _weighted_level_score(dims, weights)
        final = level
        if nested:
            if _has_blacklist_violation(nested):
                results.append(_ordered_nested(entry, nested))
                continue
            final = 0.7 * level + 0.3 * _mean_score(nested)
        entry["score"] = round2_plain(final)
        results.append(_ordered_nested(entry, nested if nested else None))
    return results


def _ordered_nested(entry: dict[str, Any], nested: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Lay a nested result out in the reference's key order (undefined keys omitted)."""
    ordered: dict[str, Any] = {"stepName": entry["stepName"], "score": entry["score"]}
    for key in ("accuracy", "efficiency", "blacklist", "toolFailures"):
        if key in entry:
            ordered[key] = entry[key]
    if nested is not None:
        ordered["nested"] = nested
    return ordered


def unified_trajectory(
    actual_trajectory: object,
    defaults: Mapping[str, Any] | None = None,
    weights: Mapping[str, Any] | None = None,
    run_expected_trajectory: object = None,
) -> tuple[dict[str, Any], float, str]:
    """Preprocess result, score and reason of ``createTrajectoryScorerCode``.

    The dataset item's expectation is shallow-merged over ``defaults`` (item wins, item
    ``steps`` replace the defaults' steps). Any blacklist violation, at the top or in a nested
    level, makes the score 0; otherwise the score is the weighted mean of the active
    dimensions, mixed 0.7/0.3 with the mean of nested scores, rounded without the EPSILON nudge.
    """
    if not isinstance(actual_trajectory, Mapping):
        raise TypeError("trajectory must be a mapping with a 'steps' list")
    resolved_weights = resolve_weights(weights)
    item = run_expected_trajectory if isinstance(run_expected_trajectory, Mapping) else {}
    config: dict[str, Any] = {**(defaults or {}), **item}

    dims = _evaluate_dimensions(actual_trajectory, config)
    steps = config.get("steps")
    nested: list[dict[str, Any]] | None = None
    if isinstance(steps, list | tuple) and len(steps) > 0:
        nested = _evaluate_nested(steps, trajectory_steps(actual_trajectory), resolved_weights)
        nested = nested or None

    preprocess: dict[str, Any] = {}
    for key in ("accuracy", "efficiency", "blacklist", "toolFailures"):
        if key in dims:
            preprocess[key] = dims[key]
    if nested is not None:
        preprocess["nested"] = nested
    preprocess["config"] = config

    score = _unified_score(dims, nested, resolved_weights)
    return preprocess, score, _unified_reason(dims, nested, score)


def _unified_score(
    dims: _Dimensions, nested: list[dict[str, Any]] | None, weights: TrajectoryWeights
) -> float:
    if "blacklist" in dims and dims["blacklist"]["score"] == 0:
        return 0.0
    level, any_active = _weighted_level_score(dims, weights)
    if not any_active and nested is None:
        return 1.0  # nothing to judge: a clean pass
    if nested:
        if _has_blacklist_violation(nested):
            return 0.0
        level = 0.7 * level + 0.3 * _mean_score(nested)
    return round2_plain(level)


def _unified_reason(dims: _Dimensions, nested: list[dict[str, Any]] | None, score: float) -> str:
    """The reference's ``generateReason`` lines, joined by newlines."""
    num = js_number_to_string
    parts = [f"Score: {num(score)}"]

    blacklist = dims.get("blacklist")
    if blacklist is not None and blacklist["score"] == 0:
        violations: list[str] = []
        if blacklist["violatedTools"]:
            violations.append(f"forbidden tools used: {_join(blacklist['violatedTools'], ', ')}")
        if blacklist["violatedSequences"]:
            sequences = "; ".join(_join(s, " → ") for s in blacklist["violatedSequences"])
            violations.append(f"forbidden sequences: {sequences}")
        parts.append(f"Blacklist violation: {'. '.join(violations)}.")
        return "\n".join(parts)

    if nested and _has_blacklist_violation(nested):
        violating = [r["stepName"] for r in nested if _has_blacklist_violation([r])]
        parts.append(f"Nested blacklist violation in: {_join(violating, ', ')}.")
        return "\n".join(parts)

    accuracy = dims.get("accuracy")
    if accuracy is not None:
        details = [
            f"{num(accuracy['matchedSteps'])}/{num(accuracy['totalExpectedSteps'])} "
            "expected steps matched"
        ]
        if accuracy["missingSteps"]:
            details.append(f"missing: {_join(accuracy['missingSteps'], ', ')}")
        if accuracy["extraSteps"]:
            details.append(f"extra: {_join(accuracy['extraSteps'], ', ')}")
        if accuracy["outOfOrderSteps"]:
            details.append(f"out of order: {_join(accuracy['outOfOrderSteps'], ', ')}")
        parts.append(f"Accuracy ({num(accuracy['score'])}): {'. '.join(details)}.")

    efficiency = dims.get("efficiency")
    if efficiency is not None:
        details = []
        if efficiency["overStepBudget"]:
            details.append(f"over step budget ({num(efficiency['totalSteps'])} steps)")
        if efficiency["overTokenBudget"]:
            details.append(f"over token budget ({num(efficiency['totalTokens'])} tokens)")
        if efficiency["overDurationBudget"]:
            details.append(f"over duration budget ({_js_str(efficiency['totalDurationMs'])}ms)")
        if efficiency["redundantCalls"]:
            names = [call["name"] for call in efficiency["redundantCalls"]]
            details.append(f"redundant calls: {_join(names, ', ')}")
        summary = ". ".join(details) if details else "all budgets met, no redundant calls"
        parts.append(f"Efficiency ({num(efficiency['score'])}): {summary}.")

    failures = dims.get("toolFailures")
    if failures is not None and failures["patterns"]:
        details = []
        if failures["totalRetries"] > 0:
            details.append(f"{num(failures['totalRetries'])} total retries")
        if failures["excessiveRetryTools"]:
            details.append(f"excessive retries: {_join(failures['excessiveRetryTools'], ', ')}")
        parts.append(f"Tool failures ({num(failures['score'])}): {'. '.join(details)}.")

    if nested:
        summary = ", ".join(f"{_js_str(r['stepName'])}: {num(r['score'])}" for r in nested)
        parts.append(f"Nested scores: {summary}.")

    return "\n".join(parts)


def as_trajectory(output: Any) -> Any:
    """A trajectory dict as is; agent messages converted from their tool calls."""
    if isinstance(output, Mapping) and "steps" in output:
        return output
    return extract_trajectory(output)


def expected_item(value: Any) -> Any:
    """An expectation param as the reference's JSON; anything else unchanged."""
    if isinstance(value, TrajectoryExpectation):
        return value.to_reference()
    return value
