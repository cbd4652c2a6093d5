"""Tool-call accuracy (LLM): did the agent pick the right tools for what the user asked?

Parity with ``createToolCallAccuracyScorerLLM`` (``llm-tool-call-accuracy-scorer``, reference
§2.17). The tool calls are read from the output (the reference's message shapes and OpenAI
``tool_calls`` alike); a judge marks each call appropriate only if it directly serves what the
user explicitly asked for (merely "helpful" tools are not), and, when no tool was called,
whether that was right (asking to clarify a vague request is) and which tools are missing.

Score: with evaluations, ``round2(#appropriate / #evaluations)``; with none (no tool called),
0 if the judge names missing tools, else 1. Multiplied by ``scale`` (default 1).

Deviations from the reference
- The evaluations must be one per tool call (none when no tool was called); otherwise the
  judge gets one repair turn and then the run fails (status "error"). The reference scores
  whatever evaluations came back, and 1.0 when tools were called but none was evaluated: the
  no-evaluation branch of its formula is meant for runs without tool calls, and an ungraded
  call is not an appropriate one.
- ``scale`` (default 1) multiplies the score before rounding; the reference has no scale.
- ``available_tools`` must list at least one ``{id, description}`` (the reference accepts an
  empty list, leaving the judge nothing to name as missing).
- ``reason`` can be ``"template"`` (written from the evaluations, no model call) or
  ``"none"``; the reference always asks the judge. The LLM reason prompt gets the score and
  the evaluations only (not the user request again).
  The LLM reason step, like every judge's, has plain-text system instructions (no JSON).
- Judged texts (request, response, the called tool names) are fenced with ``data_block``; the
  prompts are our own words.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.messages.chat import input_texts
from assay.messages.tool_calls import extract_tool_calls
from assay.scorers._lib.formulas import count, share
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Needs,
    Prompt,
    Unrounded,
    View,
    fmt,
    one_per_item,
)

EMPTY_RUN_MESSAGE = "Input and output messages cannot be null or empty"

INSTRUCTIONS = """\
You assess whether an AI agent chose the right tools for a user's request.
Read the request literally. A tool call is appropriate only if it directly provides what the
user explicitly asked for; a tool that is merely related or might be helpful, but that the
request does not call for, is inappropriate. When the agent called no tool, judge that
decision: asking a clarifying question about a vague or underspecified request is right (no
tools are missing); answering a clear, specific request generically, or ignoring it, when an
available tool would have served it, is wrong (name those tools as missing); stalling on a
request that is already specific enough is wrong too. Give short, specific reasoning."""


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


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | str | dict) and len(value) == 0)


def _has_messages(j: View[Any]) -> bool:
    call = j.ctx.call
    return not (_is_empty(call.input) or _is_empty(call.output) or not input_texts(call.input))


def _task(tools: list[str]) -> str:
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


class ToolCallAccuracyLLM(JudgeScorer[ToolCallAccuracyLLMParams]):
    """Share of the agent's tool calls a judge finds appropriate for what the user
    explicitly asked; with no tool calls, 1 unless the judge names missing tools."""

    type_id, params_model = "tool-call-accuracy-llm", ToolCallAccuracyLLMParams
    label = "Tool Call Accuracy (LLM)"
    reference = "createToolCallAccuracyScorerLLM (llm-tool-call-accuracy-scorer)"
    preview_notes = (
        "Needs input and output messages (empty → error) and the available tools. "
        "Strict: tools that are only 'helpful' count as inappropriate. One judge call, plus one "
        "for the reason when reason='llm'."
    )
    instructions = INSTRUCTIONS
    reason_sentences = 1
    needs = (Needs("input and output", _has_messages, EMPTY_RUN_MESSAGE),)
    meaning = "0 = wrong tools, the top of the scale = right tools for the user's request"
    analyze = Prompt(
        "Evaluate the agent's tool choices for the user's request.",
        ToolSelectionAnalysis,
        inputs={
            "user request": lambda j: j.input,
            "agent response": lambda j: j.output,
            "tools the agent called, in order": lambda j: ", ".join(j.pre["actualTools"]) or "none",
        },
        after=lambda j: (
            "Available tools (id: description):\n"
            + "\n".join(f"{tool.id}: {tool.description}" for tool in j.params.available_tools)
            + "\n\n"
            + _task(j.pre["actualTools"])
        ),
        check=one_per_item(lambda j: j.pre["actualTools"], "evaluations", "tool call"),
        description="Judge whether each tool call fits the user's explicit request",
    )

    def prepare(self, j: View[ToolCallAccuracyLLMParams]) -> dict[str, Any]:
        calls = extract_tool_calls(j.ctx.call.output)
        return {
            "actualTools": calls.tools,
            "hasToolCalls": bool(calls.tools),
            "toolCallInfos": [info.to_dict() for info in calls.tool_call_infos],
        }

    def score(self, j: View[ToolCallAccuracyLLMParams]) -> float:
        evaluations, called = j.analysis.evaluations, len(j.pre["actualTools"])
        if evaluations:
            return share(evaluations, "wasAppropriate", True)
        if called:
            raise ValueError(
                f"the judge returned no evaluations although the agent made {called} tool call(s)"
            )
        return Unrounded(0.0 if j.analysis.missingTools else 1.0)

    def findings(self, j: View[ToolCallAccuracyLLMParams]) -> dict[str, Any]:
        evaluations = [e.model_dump() for e in j.analysis.evaluations]
        missing = j.analysis.missingTools or []
        return {"evaluations": {"evaluations": evaluations, "missingTools": missing}}

    def reason(self, j: View[ToolCallAccuracyLLMParams]) -> str:
        evaluations, missing = j.analysis.evaluations, j.analysis.missingTools or []
        head = f"Score {fmt(j.score)}:"
        if not evaluations:
            if missing:
                return f"{head} no tool was called, but the request needed {', '.join(missing)}."
            return f"{head} no tool was called, and none was needed."
        appropriate = count(evaluations, "wasAppropriate", True)
        parts = [f"{head} {appropriate} of {len(evaluations)} tool calls appropriate."]
        wrong = [f"{e.toolCalled} ({e.reasoning})" for e in evaluations if not e.wasAppropriate]
        if wrong:
            parts.append(f"Inappropriate: {'; '.join(wrong)}.")
        if missing:
            parts.append(f"Missing: {', '.join(missing)}.")
        return " ".join(parts)
