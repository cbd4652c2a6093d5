"""Trajectories as the trajectory judge shows them (reference ``formatTrajectory`` /
``formatExpectedSteps``), where expected steps come from, and the step count a judge
answer must have.

Kept apart from ``trajectory_accuracy_llm`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.messages.chat import get_assistant_message
from assay.messages.tool_calls import extract_trajectory
from assay.messages.trajectory import js_stringify
from assay.scorers._lib.trajectory_params import ExpectedStep, TrajectoryExpectation
from assay.scorers._lib.verdicts import count_mismatch


def _json(value: Any) -> str:
    try:
        text = js_stringify(value)
    except (TypeError, ValueError, RecursionError):
        text = None
    return text if text is not None else str(value)


def _step_details(step: Mapping[str, Any]) -> str:
    step_type = step.get("stepType")
    if step_type in ("tool_call", "mcp_tool_call"):
        parts = [
            f"{label}: {_json(step[key])}"
            for label, key in (("args", "toolArgs"), ("result", "toolResult"))
            if key in step
        ]
        return f" ({', '.join(parts)})" if parts else ""
    if step_type == "model_generation":
        return f" (model: {step['modelId']})" if step.get("modelId") else ""
    if step_type == "workflow_step":
        return f" (output: {_json(step['output'])})" if "output" in step else ""
    return ""


def format_trajectory(steps: Sequence[Any], indent: int = 0) -> str:
    """Numbered ``[stepType] name (details)`` lines; children indented two spaces per level."""
    prefix = "  " * indent
    lines = []
    for i, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            lines.append(f"{prefix}{i}. {_json(step)}")
            continue
        line = f"{prefix}{i}. [{step.get('stepType')}] {step.get('name')}{_step_details(step)}"
        children = step.get("children")
        if isinstance(children, list) and children:
            line += "\n" + format_trajectory(children, indent + 1)
        lines.append(line)
    return "\n".join(lines)


def format_expected_steps(steps: Sequence[Any], indent: int = 0) -> str:
    """Numbered ``[stepType] name ({other fields})`` lines (type only if given)."""
    prefix = "  " * indent
    lines = []
    for i, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            lines.append(f"{prefix}{i}. {_json(step)}")
            continue
        type_str = f"[{step['stepType']}] " if step.get("stepType") else ""
        fields = {k: v for k, v in step.items() if k not in ("name", "stepType", "children")}
        data = f" ({_json(fields)})" if fields else ""
        line = f"{prefix}{i}. {type_str}{step.get('name')}{data}"
        children = step.get("children")
        child_steps = children.get("steps") if isinstance(children, Mapping) else None
        if isinstance(child_steps, list) and child_steps:
            line += "\n" + format_expected_steps(child_steps, indent + 1)
        lines.append(line)
    return "\n".join(lines)


def as_trajectory(output: Any) -> Mapping[str, Any]:
    """A trajectory dict as is; agent messages converted from their tool calls."""
    if isinstance(output, Mapping) and "steps" in output:
        if not isinstance(output["steps"], list):
            raise ValueError("the output trajectory's 'steps' must be a list")
        return output
    return extract_trajectory(output)


def static_expected(param: TrajectoryExpectation | list[ExpectedStep] | None) -> list[Any]:
    if isinstance(param, list):
        return [step.to_reference() for step in param]
    if isinstance(param, TrajectoryExpectation):
        # A recorded run used as the expectation: drop its runtime-only fields.
        return [
            {k: v for k, v in step.items() if k not in ("durationMs", "metadata")}
            for step in param.to_reference().get("steps", [])
        ]
    return []


def item_expected(value: Any) -> list[Any]:
    if isinstance(value, TrajectoryExpectation):
        value = value.to_reference()
    if isinstance(value, Mapping):
        value = value.get("steps")
    return list(value) if isinstance(value, list | tuple) else []


def _numbered_lines(steps: Sequence[Any]) -> int:
    """How many numbered lines ``format_trajectory`` writes: nested steps included."""
    total = 0
    for step in steps:
        total += 1
        children = step.get("children") if isinstance(step, Mapping) else None
        if isinstance(children, list) and children:
            total += _numbered_lines(children)
    return total


def step_count_problem(output: Any, got: int) -> str | None:
    """Why ``got`` step evaluations do not fit the trajectory of ``output`` (one per numbered
    step: the top-level steps, or every numbered line with the nested ones); ``None`` if
    they fit."""
    steps = as_trajectory(output)["steps"]
    top, lines = len(steps), _numbered_lines(steps)
    if got in (top, lines):
        return None
    expected: int | str = top if top == lines else f"{top} (or {lines} with nested steps)"
    return count_mismatch(expected, "stepEvaluations", "numbered step of the trajectory", got)


def trajectory_payload(
    output: Any, expected_param: TrajectoryExpectation | list[ExpectedStep] | None, item: Any
) -> dict[str, Any]:
    """What the judge is shown (the preprocess result): the actual steps formatted, the
    expected ones (the param's, else the item's) and where they came from."""
    steps: list[Any] = list(as_trajectory(output)["steps"])
    expected, source = static_expected(expected_param), "params"
    if not expected:
        expected = item_expected(item)
        source = "item" if expected else "none"
    return {
        "actualTrajectoryFormatted": format_trajectory(steps),
        "expectedTrajectoryFormatted": format_expected_steps(expected) if expected else None,
        "expectedSource": source,
        "hasSteps": bool(steps),
        "stepCount": len(steps),
    }


def final_response(output: Any) -> str:
    """The agent's final text: of the trajectory's ``rawOutput``, else of the messages."""
    is_trajectory = isinstance(output, Mapping) and "steps" in output
    return get_assistant_message(output.get("rawOutput") if is_trajectory else output) or ""
