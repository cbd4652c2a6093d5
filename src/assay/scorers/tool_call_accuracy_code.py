"""Tool-call accuracy (code): was the expected tool called, or the expected order followed?

Parity with ``createToolCallAccuracyScorerCode``. Tool calls are read from the reference's
message shapes and from OpenAI-style ``tool_calls`` alike (``assay.messages.tool_calls``).
Binary score, no reason step.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, model_validator

from assay.messages.chat import input_texts
from assay.messages.tool_calls import extract_tool_calls
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer

_EMPTY = "Input and output messages cannot be null or empty"


class ToolCallAccuracyCodeParams(ScorerParams):
    expected_tool: str | None = Field(default=None, description="The tool that should be called.")
    strict_mode: bool = Field(
        default=False,
        description="Strict: exactly one call and it is the expected tool (or, with an order, "
        "exactly that sequence).",
    )
    expected_tool_order: list[str] | None = Field(
        default=None, description="Tools that should be called in this relative order."
    )

    @model_validator(mode="after")
    def _needs_an_expectation(self) -> ToolCallAccuracyCodeParams:
        if not self.expected_tool and not self.expected_tool_order:
            raise ValueError("Either expectedTool or expectedToolOrder must be provided")
        return self


def check_order(actual: list[str], expected: list[str], strict: bool) -> bool:
    """Strict: identical sequences. Relaxed: the first occurrence of every expected tool
    exists and those first occurrences are strictly increasing."""
    if strict:
        return json.dumps(actual) == json.dumps(expected)
    last = -1
    for tool in expected:
        if tool not in actual:
            return False
        index = actual.index(tool)
        if index <= last:
            return False
        last = index
    return True


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | str | dict) and len(value) == 0)


@register_scorer(
    "tool-call-accuracy-code",
    label="Tool Call Accuracy",
    description="1 if the expected tool was called (or the expected tool order followed), else 0.",
    params=ToolCallAccuracyCodeParams,
    reference="createToolCallAccuracyScorerCode (code-tool-call-accuracy-scorer)",
    preview_notes="Binary. With expected_tool_order, expected_tool is ignored.",
)
def build(params: ToolCallAccuracyCodeParams) -> Scorer:
    def preprocess(ctx: StepContext) -> dict[str, Any]:
        run = ctx.call
        if _is_empty(run.input) or _is_empty(run.output) or not input_texts(run.input):
            raise ValueError(_EMPTY)
        calls = extract_tool_calls(run.output)
        actual = calls.tools
        if params.expected_tool:
            if params.strict_mode:
                correct = actual == [params.expected_tool]
            else:
                correct = params.expected_tool in actual
        else:
            correct = False
        order_ok = (
            check_order(actual, params.expected_tool_order, params.strict_mode)
            if params.expected_tool_order
            else None
        )
        return {
            "expectedTool": params.expected_tool,
            "actualTools": actual,
            "strictMode": params.strict_mode,
            "expectedToolOrder": params.expected_tool_order,
            "hasToolCalls": bool(actual),
            "correctToolCalled": correct,
            "toolCallInfos": [info.to_dict() for info in calls.tool_call_infos],
            "correctOrderCalled": order_ok,
        }

    def score(ctx: StepContext) -> float:
        data = ctx.preprocess_result
        if not data["hasToolCalls"]:
            return 0.0
        if params.expected_tool_order:
            return 1.0 if data["correctOrderCalled"] else 0.0
        return 1.0 if data["correctToolCalled"] else 0.0

    return (
        Scorer("tool-call-accuracy-code", description="Tool call accuracy (code)")
        .preprocess(preprocess)
        .score(score)
    )
