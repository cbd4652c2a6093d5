"""Trajectory scoring (reference ``scorers.md`` §3.4): how well a run's steps meet an
expectation, a budget, a blacklist; how it handled failing tools.

Ported from ``compareTrajectories``, ``checkTrajectoryEfficiency``, ``checkTrajectoryBlacklist``
and ``analyzeToolFailures`` in ``@mastra/evals@1.10.2`` (``src/scorers/utils.ts``). They read
trajectories through ``assay.messages.trajectory`` (steps, fields, step matching, JavaScript's
``undefined`` as ``MISSING``) and return the reference's camelCase result dicts; the
trajectory scorers (``trajectory_scoring``) combine them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

from assay.messages.trajectory import (
    MISSING,
    TOOL_STEP_TYPES,
    is_measurement,
    js_stringify,
    js_truthy,
    optional_field,
    step_field,
    step_matches,
    step_names,
    trajectory_steps,
)
from assay.rounding import round2

__all__ = [
    "RedundantCall",
    "ToolFailureAnalysisResult",
    "ToolFailurePattern",
    "TrajectoryBlacklistResult",
    "TrajectoryComparisonResult",
    "TrajectoryEfficiencyResult",
    "analyze_tool_failures",
    "check_trajectory_blacklist",
    "check_trajectory_efficiency",
    "compare_trajectories",
]


class TrajectoryComparisonResult(TypedDict):
    """Result of :func:`compare_trajectories` (reference ``TrajectoryComparisonResult``)."""

    score: float
    matchedSteps: int
    totalExpectedSteps: int
    totalActualSteps: int
    missingSteps: list[Any]
    extraSteps: list[Any]
    outOfOrderSteps: list[Any]
    repeatedSteps: list[Any]


class RedundantCall(TypedDict):
    """A tool call repeating the previous call with identical arguments."""

    name: Any
    index: int


class TrajectoryEfficiencyResult(TypedDict):
    """Result of :func:`check_trajectory_efficiency`."""

    score: float
    totalSteps: int
    overStepBudget: bool
    totalTokens: float
    overTokenBudget: bool
    totalDurationMs: Any
    overDurationBudget: bool
    redundantCalls: list[RedundantCall]


class TrajectoryBlacklistResult(TypedDict):
    """Result of :func:`check_trajectory_blacklist` (score is 0 on any violation)."""

    score: float
    violatedTools: list[Any]
    violatedSequences: list[list[Any]]


class ToolFailurePattern(TypedDict):
    """A run of consecutive calls to one tool that contained retries after failures."""

    toolName: Any
    retryCount: int
    fellBackToAlternative: bool
    alternativeTool: NotRequired[Any]
    eventuallySucceeded: bool


class ToolFailureAnalysisResult(TypedDict):
    """Result of :func:`analyze_tool_failures`."""

    score: float
    patterns: list[ToolFailurePattern]
    totalRetries: int
    excessiveRetryTools: list[Any]


def compare_trajectories(
    actual: object,
    expected: object,
    ordering: str | None = "relaxed",
    allow_repeated_steps: object = True,
) -> TrajectoryComparisonResult:
    """Compare an actual trajectory with expected steps (reference ``compareTrajectories``).

    ``expected`` is ``{"steps": [...]}`` (a Trajectory or an expectation) or a bare list of
    expected steps. ``ordering`` is ``strict`` (position-wise, extra steps penalised),
    ``relaxed`` (expected steps in order, extras allowed; the default, also for unknown
    values) or ``unordered``. With ``allow_repeated_steps`` falsy each repeated name costs 0.1.
    """
    actual_steps = trajectory_steps(actual)
    expected_steps = trajectory_steps(expected)
    if len(expected_steps) == 0:
        return {
            "score": 1 if len(actual_steps) == 0 else 0,
            "matchedSteps": 0,
            "totalExpectedSteps": 0,
            "totalActualSteps": len(actual_steps),
            "missingSteps": [],
            "extraSteps": step_names(actual_steps),
            "outOfOrderSteps": [],
            "repeatedSteps": [],
        }

    counts: dict[Any, int] = {}
    for name in step_names(actual_steps):
        counts[name] = counts.get(name, 0) + 1
    repeated = [name for name, count in counts.items() if count > 1]

    if ordering == "strict":
        matched, matched_idx, out_of_order = _match_strict(actual_steps, expected_steps)
    elif ordering == "unordered":
        matched, matched_idx, out_of_order = _match_unordered(actual_steps, expected_steps)
    else:
        matched, matched_idx, out_of_order = _match_relaxed(actual_steps, expected_steps)

    actual_names = step_names(actual_steps)
    expected_names = step_names(expected_steps)
    score: float = matched / len(expected_steps)
    if ordering == "strict" and len(actual_names) > len(expected_names):
        extra_penalty = (len(actual_names) - len(expected_names)) / len(expected_names)
        score = max(0, score - extra_penalty * 0.5)
    if not js_truthy(allow_repeated_steps) and len(repeated) > 0:
        score = max(0, score - len(repeated) * 0.1)

    return {
        "score": round2(max(0, min(1, score))),
        "matchedSteps": matched,
        "totalExpectedSteps": len(expected_steps),
        "totalActualSteps": len(actual_steps),
        "missingSteps": [n for i, n in enumerate(expected_names) if i not in matched_idx],
        "extraSteps": [n for n in actual_names if n not in expected_names],
        "outOfOrderSteps": out_of_order,
        "repeatedSteps": repeated,
    }


_MatchOutcome = tuple[int, set[int], list[Any]]


def _match_strict(actual_steps: Sequence[Any], expected_steps: Sequence[Any]) -> _MatchOutcome:
    """Position-wise comparison; a name expected elsewhere counts as out of order."""
    actual_names = step_names(actual_steps)
    expected_names = step_names(expected_steps)
    matched = 0
    matched_idx: set[int] = set()
    out_of_order: list[Any] = []
    for i in range(max(len(actual_names), len(expected_names))):
        # Past the end of a list the reference reads `undefined`; a nameless step can then
        # "match" it, which this port reproduces with None on both sides.
        actual_name = actual_names[i] if i < len(actual_names) else None
        expected_name = expected_names[i] if i < len(expected_names) else None
        if actual_name == expected_name:
            both = i < len(actual_steps) and i < len(expected_steps)
            if not both or step_matches(actual_steps[i], expected_steps[i]):
                matched += 1
                matched_idx.add(i)
        elif js_truthy(actual_name) and actual_name in expected_names:
            out_of_order.append(actual_name)
    return matched, matched_idx, out_of_order


def _match_relaxed(actual_steps: Sequence[Any], expected_steps: Sequence[Any]) -> _MatchOutcome:
    """Expected steps must appear in order; extra actual steps in between are allowed."""
    actual_names = step_names(actual_steps)
    expected_names = step_names(expected_steps)
    matched = 0
    matched_idx: set[int] = set()
    out_of_order: list[Any] = []
    last_matched = -1
    for i, expected_name in enumerate(expected_names):
        found = False
        for j in range(last_matched + 1, len(actual_names)):
            if actual_names[j] == expected_name and step_matches(
                actual_steps[j], expected_steps[i]
            ):
                matched += 1
                last_matched = j
                matched_idx.add(i)
                found = True
                break
        if not found and expected_name in actual_names:
            out_of_order.append(expected_name)
    return matched, matched_idx, out_of_order


def _match_unordered(actual_steps: Sequence[Any], expected_steps: Sequence[Any]) -> _MatchOutcome:
    """Each expected step consumes the first unused matching actual step; no ordering."""
    matched = 0
    matched_idx: set[int] = set()
    used: set[int] = set()
    for i, expected_step in enumerate(expected_steps):
        for j, actual_step in enumerate(actual_steps):
            if j not in used and step_matches(actual_step, expected_step):
                matched += 1
                matched_idx.add(i)
                used.add(j)
                break
    return matched, matched_idx, []


# ─── checkTrajectoryEfficiency ───


def _budget_dimension(actual: float, budget: float, over: bool) -> float:
    """1 within budget, else ``max(0, 1 - overshoot/budget)`` (a zero budget overshot → 0)."""
    if not over:
        return 1
    if budget == 0:  # JS: positive / 0 = Infinity → max(0, -Infinity) = 0
        return 0
    return max(0, 1 - (actual - budget) / budget)


def _count_or_zero(value: object) -> float:
    """``value ?? 0`` for a count; non-numeric junk (only possible without a budget) counts 0."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return 0


def check_trajectory_efficiency(
    trajectory: object,
    *,
    max_steps: float | None = None,
    max_total_tokens: float | None = None,
    max_total_duration_ms: float | None = None,
    no_redundant_calls: bool = True,
) -> TrajectoryEfficiencyResult:
    """Score step/token/duration budgets and redundant calls (``checkTrajectoryEfficiency``).

    ``None`` means "no budget". A budget that is set must be a finite nonnegative number, and
    the measurement it needs must exist (every model generation has both token counts and
    there is at least one; a valid ``totalDurationMs`` or a valid ``durationMs`` on every
    step) — otherwise ``ValueError``, because silently scoring a budget against missing data
    would pass anything.
    """
    budgets = (
        ("maxSteps", max_steps),
        ("maxTotalTokens", max_total_tokens),
        ("maxTotalDurationMs", max_total_duration_ms),
    )
    for name, limit in budgets:
        if limit is not None and not is_measurement(limit):
            raise ValueError(f"Invalid {name} budget: expected a finite nonnegative number")

    steps = trajectory_steps(trajectory)
    total_steps = len(steps)

    # Every model generation counts, including nested ones; containers add no aggregates.
    total_tokens: float = 0
    generations = 0
    remaining = list(steps)
    while remaining:
        step = remaining.pop()
        if step_field(step, "stepType") == "model_generation":
            generations += 1
            prompt, completion = (
                step_field(step, "promptTokens"),
                step_field(step, "completionTokens"),
            )
            if max_total_tokens is not None and not (
                is_measurement(prompt) and is_measurement(completion)
            ):
                name = optional_field(step, "name")
                raise ValueError(
                    f'Cannot evaluate token budget: model generation "{name}" has missing or '
                    "invalid token counts"
                )
            total_tokens += _count_or_zero(prompt) + _count_or_zero(completion)
        children = step_field(step, "children")
        if isinstance(children, list | tuple):
            remaining.extend(children)
    if max_total_tokens is not None and (generations == 0 or not is_measurement(total_tokens)):
        raise ValueError(
            "Cannot evaluate token budget: missing model-generation measurements or invalid "
            "total tokens"
        )

    # A parent duration already covers its children; never add both.
    declared = step_field(trajectory, "totalDurationMs")
    total_duration: Any
    if declared is not MISSING and declared is not None:
        total_duration = declared
    else:
        total_duration = 0
        for step in steps:
            total_duration = total_duration + _count_or_zero(step_field(step, "durationMs"))
    if max_total_duration_ms is not None:
        if declared is not MISSING:
            has_duration = is_measurement(declared)
        else:
            has_duration = len(steps) > 0 and all(
                is_measurement(step_field(step, "durationMs")) for step in steps
            )
        if not has_duration or not is_measurement(total_duration):
            raise ValueError(
                "Cannot evaluate duration budget: missing or invalid duration measurements"
            )

    redundant: list[RedundantCall] = []
    if no_redundant_calls:
        for i in range(1, len(steps)):
            prev, curr = steps[i - 1], steps[i]
            prev_type = step_field(prev, "stepType")
            if (
                step_field(prev, "name") == step_field(curr, "name")
                and prev_type == step_field(curr, "stepType")
                and prev_type in TOOL_STEP_TYPES
            ):
                try:
                    same = js_stringify(step_field(prev, "toolArgs")) == js_stringify(
                        step_field(curr, "toolArgs")
                    )
                except (TypeError, ValueError, RecursionError):
                    same = False  # unserialisable args are never flagged
                if same:
                    redundant.append({"name": optional_field(curr, "name"), "index": i})

    over_steps = max_steps is not None and total_steps > max_steps
    over_tokens = max_total_tokens is not None and total_tokens > max_total_tokens
    over_duration = max_total_duration_ms is not None and total_duration > max_total_duration_ms

    dimensions: list[float] = []
    if max_steps is not None:
        dimensions.append(_budget_dimension(total_steps, max_steps, over_steps))
    if max_total_tokens is not None:
        dimensions.append(_budget_dimension(total_tokens, max_total_tokens, over_tokens))
    if max_total_duration_ms is not None:
        dimensions.append(_budget_dimension(total_duration, max_total_duration_ms, over_duration))
    if no_redundant_calls:
        dimensions.append(1 if not redundant else max(0, 1 - len(redundant) * 0.2))

    score: float = 1
    if dimensions:
        acc: float = 0
        for d in dimensions:  # left-to-right like Array.reduce (no compensated summation)
            acc = acc + d
        score = acc / len(dimensions)

    return {
        "score": round2(max(0, min(1, score))),
        "totalSteps": total_steps,
        "overStepBudget": over_steps,
        "totalTokens": total_tokens,
        "overTokenBudget": over_tokens,
        "totalDurationMs": total_duration,
        "overDurationBudget": over_duration,
        "redundantCalls": redundant,
    }


# ─── checkTrajectoryBlacklist ───


def check_trajectory_blacklist(
    trajectory: object,
    *,
    blacklisted_tools: Sequence[Any] | None = None,
    blacklisted_sequences: Sequence[Sequence[Any]] | None = None,
) -> TrajectoryBlacklistResult:
    """Hard-fail check for forbidden tools and contiguous forbidden name sequences.

    Only top-level step names are inspected (nested levels have their own expectations).
    Each violated sequence is reported once; empty sequences never match.
    """
    names = step_names(trajectory_steps(trajectory))
    violated_tools = [tool for tool in blacklisted_tools or () if tool in names]
    violated_sequences: list[list[Any]] = []
    for sequence in blacklisted_sequences or ():
        seq = list(sequence)
        if not seq:
            continue
        for i in range(len(names) - len(seq) + 1):
            if names[i : i + len(seq)] == seq:
                violated_sequences.append(seq)
                break
    violated = bool(violated_tools or violated_sequences)
    return {
        "score": 0 if violated else 1,
        "violatedTools": violated_tools,
        "violatedSequences": violated_sequences,
    }


# ─── analyzeToolFailures ───


def analyze_tool_failures(
    trajectory: object, *, max_retries_per_tool: float = 2
) -> ToolFailureAnalysisResult:
    """Find retry runs among tool calls (reference ``analyzeToolFailures``).

    Consecutive calls to the same tool form a group; each call following a call with
    ``success is False`` is a retry. Retries beyond ``max_retries_per_tool`` cost 0.2 each.
    """
    tool_steps = [
        s for s in trajectory_steps(trajectory) if step_field(s, "stepType") in TOOL_STEP_TYPES
    ]
    if not tool_steps:
        return {"score": 1, "patterns": [], "totalRetries": 0, "excessiveRetryTools": []}

    patterns: list[ToolFailurePattern] = []
    total_retries = 0
    i = 0
    while i < len(tool_steps):
        tool_name = optional_field(tool_steps[i], "name")
        retries = 0
        j = i + 1
        while j < len(tool_steps) and step_field(tool_steps[j], "name") == step_field(
            tool_steps[i], "name"
        ):
            if step_field(tool_steps[j - 1], "success") is False:
                retries += 1
            j += 1
        if retries > 0:
            next_tool = tool_steps[j] if j < len(tool_steps) else None
            last_success = step_field(tool_steps[j - 1], "success") is not False
            fell_back = next_tool is not None and not last_success
            # Built in the reference's key order; alternativeTool only exists after a fallback.
            pattern: ToolFailurePattern
            if fell_back:
                pattern = {
                    "toolName": tool_name,
                    "retryCount": retries,
                    "fellBackToAlternative": True,
                    "alternativeTool": optional_field(next_tool, "name"),
                    "eventuallySucceeded": last_success,
                }
            else:
                pattern = {
                    "toolName": tool_name,
                    "retryCount": retries,
                    "fellBackToAlternative": False,
                    "eventuallySucceeded": last_success,
                }
            patterns.append(pattern)
            total_retries += retries
        i = j

    excessive = [p["toolName"] for p in patterns if p["retryCount"] > max_retries_per_tool]
    excess: float = 0
    for p in patterns:
        excess = excess + max(0, p["retryCount"] - max_retries_per_tool)
    score = max(0, 1 - excess * 0.2)
    return {
        "score": round2(max(0, min(1, score))),
        "patterns": patterns,
        "totalRetries": total_retries,
        "excessiveRetryTools": excessive,
    }
