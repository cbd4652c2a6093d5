"""Tool choice as the LLM tool-call judge sees it: the params (the available tools), the
calls a run made, the judge's evaluation of each call and how it is told to fill them in,
and whether a run has the messages to judge.

Kept apart from ``tool_call_accuracy_llm`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.messages.chat import input_texts
from assay.messages.tool_calls import extract_tool_calls
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import AnyView

EMPTY_RUN_MESSAGE = "Input and output messages cannot be null or empty"


class AvailableTool(BaseModel):
    """A tool the agent could call, as shown to the judge (``id: description``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="The tool's name as the agent calls it.")
    description: str = Field(default="", description="What the tool does.")


class ToolCallAccuracyLLMParams(ReasonedJudgeParams):
    available_tools: list[AvailableTool] = Field(
        min_length=1,
        description="The tools the agent could call: a list of {id, description}.",
    )


class ToolEvaluation(BaseModel):
    toolCalled: str = Field(description="Name of the tool call being evaluated.")
    wasAppropriate: bool = Field(
        description="True only if the call directly serves what the user explicitly asked for."
    )
    reasoning: str = Field(description="Short, specific reason.")


class ToolSelectionAnalysis(BaseModel):
    evaluations: list[ToolEvaluation] = Field(
        description="One evaluation per tool call, in call order; empty if no tool was called."
    )
    missingTools: list[str] | None = Field(
        default=None,
        description="Available tools the request clearly needed but the agent did not call.",
    )


def is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | str | dict) and len(value) == 0)


def has_messages(j: AnyView) -> bool:
    """Input and output are both given, and the input has some text."""
    call = j.ctx.call
    return not (is_empty(call.input) or is_empty(call.output) or not input_texts(call.input))


def called_tools(output: Any) -> dict[str, Any]:
    """The tool calls in a run's output, as the reference's preprocess step reports them."""
    calls = extract_tool_calls(output)
    return {
        "actualTools": calls.tools,
        "hasToolCalls": bool(calls.tools),
        "toolCallInfos": [info.to_dict() for info in calls.tool_call_infos],
    }


def answer_task(tools: list[str]) -> str:
    """How to fill in a ``ToolSelectionAnalysis`` for the calls made (or for none)."""
    if tools:
        return (
            'Return one entry in "evaluations" per tool call above, in order. In '
            '"missingTools", list available tools the request clearly needed but the agent '
            "did not call (or an empty list)."
        )
    return (
        'The agent called no tool: return an empty "evaluations" list and, in '
        '"missingTools", the available tools the request clearly needed (an empty list '
        "if not calling a tool was the right decision, e.g. the agent rightly asked for "
        "clarification)."
    )
