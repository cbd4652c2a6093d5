"""Trajectory shapes (reference ``scorers.md`` §3.4): steps, their fields, step matching.

The reading side of ``@mastra/evals@1.10.2``'s trajectory helpers (``src/scorers/utils.ts``)
and the step conversion of ``src/scorers/code/trajectory/index.ts``: what a step is, how two
steps match, JSON equality the way JavaScript sees it. The scoring built on them
(``compareTrajectories``, ``checkTrajectoryEfficiency``, ``checkTrajectoryBlacklist``,
``analyzeToolFailures``) lives with the scorers, in ``scorers/_lib/trajectory_checks.py``.
Trajectories are plain JSON-shaped dicts with the reference's camelCase keys
(``{"steps": [...], "totalDurationMs": ...}``).

JavaScript distinguishes a *missing* key (``undefined``) from JSON ``null``; the reference
relies on that in a few places (``expected.toolArgs === undefined`` skips a field, a present
``totalDurationMs`` must be a valid measurement). Here "missing" means "key absent" and
``None`` is JSON ``null``, so results match the reference for the same JSON input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "COMPARABLE_FIELDS_BY_TYPE",
    "MISSING",
    "TOOL_STEP_TYPES",
    "is_measurement",
    "js_stringify",
    "js_truthy",
    "json_equal",
    "optional_field",
    "step_field",
    "step_matches",
    "step_names",
    "trajectory_step_to_expected_step",
    "trajectory_steps",
    "trajectory_to_expected_steps",
]


# Fields compared (when present on the expected step) per step type; mirrors the reference's
# COMPARABLE_FIELDS_BY_TYPE. Structural fields (name, children, durationMs) are never compared.
COMPARABLE_FIELDS_BY_TYPE: Final[Mapping[str, tuple[str, ...]]] = {
    "tool_call": ("toolArgs", "toolResult", "success"),
    "mcp_tool_call": ("toolArgs", "toolResult", "mcpServer", "success"),
    "model_generation": ("modelId", "promptTokens", "completionTokens", "finishReason"),
    "agent_run": ("agentId",),
    "workflow_step": ("stepId", "status", "output"),
    "workflow_run": ("workflowId", "status"),
    "workflow_conditional": ("conditionCount", "selectedSteps"),
    "workflow_parallel": ("branchCount", "parallelSteps"),
    "workflow_loop": ("loopType", "totalIterations"),
    "workflow_sleep": ("sleepDurationMs", "sleepType"),
    "workflow_wait_event": ("eventName", "eventReceived"),
    "processor_run": ("processorId",),
}

TOOL_STEP_TYPES: Final = ("tool_call", "mcp_tool_call")


class _Missing:
    """Stand-in for JavaScript ``undefined`` (a key that is absent, not ``null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


# ─── JavaScript-compatible primitives ───


def js_truthy(value: object) -> bool:
    """JavaScript truthiness: empty containers are truthy in JS, unlike in Python."""
    if value is None or value is MISSING or value is False:
        return False
    if isinstance(value, int | float):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


def is_measurement(value: object) -> bool:
    """The reference's ``isMeasurement``: a finite, nonnegative JS number (booleans are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value >= 0


_ARRAY_INDEX_RE: Final = re.compile(r"0|[1-9][0-9]*")
_MAX_ARRAY_INDEX: Final = 2**32 - 2
_MAX_SAFE_INT: Final = 2**53


def _js_json_value(value: object) -> object:
    """Normalise a Python value so ``json.dumps`` writes what ``JSON.stringify`` would.

    JS has one number type (``1`` and ``1.0`` stringify alike; NaN/Infinity become ``null``)
    and orders integer-like object keys first, ascending; everything else keeps insertion
    order, so key order stays significant as in the reference.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(float(value)) if abs(value) > _MAX_SAFE_INT else value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        index_keys = sorted(
            (k for k in keys if _ARRAY_INDEX_RE.fullmatch(k) and int(k) <= _MAX_ARRAY_INDEX),
            key=int,
        )
        index_set = set(index_keys)
        by_key = {str(k): v for k, v in value.items()}
        ordered = index_keys + [k for k in keys if k not in index_set]
        return {k: _js_json_value(by_key[k]) for k in ordered}
    if isinstance(value, list | tuple):
        return [_js_json_value(v) for v in value]
    raise TypeError(f"value of type {type(value).__name__} is not JSON-serialisable")


def js_stringify(value: object) -> str | None:
    """``JSON.stringify(value)``; ``None`` stands for JS ``undefined`` (an absent value).

    Raises ``TypeError``/``ValueError``/``RecursionError`` where ``JSON.stringify`` would throw
    or the value is not JSON data.
    """
    if value is MISSING:
        return None
    return json.dumps(
        _js_json_value(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def json_equal(a: object, b: object) -> bool:
    """``JSON.stringify(a) === JSON.stringify(b)`` (key-order sensitive); unserialisable → False."""
    try:
        return js_stringify(a) == js_stringify(b)
    except (TypeError, ValueError, RecursionError):
        return False


def step_field(obj: object, key: str) -> Any:
    """``obj[key]`` with JS semantics: absent key (or non-object) → ``MISSING``."""
    if isinstance(obj, Mapping):
        return obj.get(key, MISSING)
    return MISSING


def optional_field(obj: object, key: str) -> Any:
    """``obj[key] ?? None`` (absent and ``null`` both map to ``None``)."""
    value = step_field(obj, key)
    return None if value is MISSING else value


def trajectory_steps(trajectory: object) -> list[Any]:
    """``trajectory.steps`` as a list; the reference fails on trajectories without steps too."""
    if isinstance(trajectory, Mapping):
        steps = trajectory.get("steps")
    elif isinstance(trajectory, list | tuple):
        steps = trajectory
    else:
        steps = None
    if not isinstance(steps, list | tuple):
        raise TypeError("trajectory must be a mapping with a 'steps' list")
    return list(steps)


def step_names(steps: Iterable[Any]) -> list[Any]:
    return [optional_field(step, "name") for step in steps]


# ─── Step conversion ───


def trajectory_step_to_expected_step(step: Mapping[str, Any]) -> dict[str, Any]:
    """Turn a recorded step into an expected step (reference ``trajectoryStepToExpectedStep``).

    Runtime-only fields (``durationMs``, ``metadata``) are dropped so a recorded run can serve
    as the expectation for the next; a non-empty ``children`` list becomes a nested expectation
    ``{"steps": [...]}``. Anything else under ``children`` (e.g. an already-converted
    expectation) is dropped, exactly as in the reference.
    """
    result = {k: v for k, v in step.items() if k not in ("durationMs", "metadata", "children")}
    children = step.get("children")
    if isinstance(children, list | tuple) and len(children) > 0:
        result["children"] = {"steps": [trajectory_step_to_expected_step(c) for c in children]}
    return result


def trajectory_to_expected_steps(trajectory: object) -> list[dict[str, Any]]:
    """Convert every top-level step of a ``Trajectory`` into an expected step."""
    return [trajectory_step_to_expected_step(step) for step in trajectory_steps(trajectory)]


# ─── compareTrajectories ───


def step_matches(actual: object, expected: object) -> bool:
    """Reference ``expectedStepMatches``: name, then stepType, then the type's data fields.

    Data fields are only compared when the expectation names a ``stepType``, and only those
    present on the expectation; a field present on the expectation but absent on the actual
    step never matches.
    """
    if step_field(actual, "name") != step_field(expected, "name"):
        return False
    step_type = step_field(expected, "stepType")
    if not js_truthy(step_type):
        return True
    if step_field(actual, "stepType") != step_type:
        return False
    fields = COMPARABLE_FIELDS_BY_TYPE.get(step_type, ()) if isinstance(step_type, str) else ()
    for field in fields:
        expected_value = step_field(expected, field)
        if expected_value is MISSING:
            continue
        actual_value = step_field(actual, field)
        if actual_value is MISSING or not json_equal(actual_value, expected_value):
            return False
    return True
