"""Tool-call accuracy (LLM): did the agent pick the right tools for what the user asked?

Formula and deviations from the reference: docs/scorers.md, "tool-call-accuracy-llm"."""

from __future__ import annotations

from typing import Any

from assay.scorers._lib.formulas import count, share
from assay.scorers._lib.judge_scorer import (
    JudgeScorer,
    Needs,
    Prompt,
    Unrounded,
    View,
    fmt,
    listed,
    one_per_item,
)
from assay.scorers._lib.tool_choice import (
    EMPTY_RUN_MESSAGE,
    ToolCallAccuracyLLMParams,
    ToolSelectionAnalysis,
    answer_task,
    called_tools,
    has_messages,
)
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You assess whether an AI agent chose the right tools for a user's request.
Read the request literally. A tool call is appropriate only if it directly provides what the
user explicitly asked for; a tool that is merely related or might be helpful, but that the
request does not call for, is inappropriate. When the agent called no tool, judge that
decision: asking a clarifying question about a vague or underspecified request is right (no
tools are missing); answering a clear, specific request generically, or ignoring it, when an
available tool would have served it, is wrong (name those tools as missing); stalling on a
request that is already specific enough is wrong too. Give short, specific reasoning."""


ToolCallAccuracyLLMView = View[ToolCallAccuracyLLMParams, dict[str, Any], ToolSelectionAnalysis]
"""What ToolCallAccuracyLLM's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "tool-call-accuracy-llm",
    label="Tool Call Accuracy (LLM)",
    params=ToolCallAccuracyLLMParams,
    reference="createToolCallAccuracyScorerLLM (llm-tool-call-accuracy-scorer)",
    preview_notes=(
        "Needs input and output messages (empty → error) and the available tools. "
        "Strict: tools that are only 'helpful' count as inappropriate. One judge call, plus one "
        "for the reason when reason='llm'."
    ),
)
class ToolCallAccuracyLLM(
    JudgeScorer[ToolCallAccuracyLLMParams, dict[str, Any], ToolSelectionAnalysis]
):
    """Share of the agent's tool calls a judge finds appropriate for what the user
    explicitly asked; with no tool calls, 1 unless the judge names missing tools."""

    instructions = INSTRUCTIONS
    reason_sentences = 1
    needs = (Needs("input and output", has_messages, EMPTY_RUN_MESSAGE),)
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
            + answer_task(j.pre["actualTools"])
        ),
        check=one_per_item(lambda j: j.pre["actualTools"], "evaluations", "tool call"),
        description="Judge whether each tool call fits the user's explicit request",
    )

    def prepare(self, j: ToolCallAccuracyLLMView) -> dict[str, Any]:
        return called_tools(j.ctx.call.output)

    def score(self, j: ToolCallAccuracyLLMView) -> float:
        evaluations, called = j.analysis.evaluations, len(j.pre["actualTools"])
        if evaluations:
            return share(evaluations, "wasAppropriate", True)
        if called:
            raise ValueError(
                f"the judge returned no evaluations although the agent made {called} tool call(s)"
            )
        return Unrounded(0.0 if j.analysis.missingTools else 1.0)

    def findings(self, j: ToolCallAccuracyLLMView) -> dict[str, Any]:
        evaluations = [e.model_dump() for e in j.analysis.evaluations]
        missing = j.analysis.missingTools or []
        return {"evaluations": {"evaluations": evaluations, "missingTools": missing}}

    def reason(self, j: ToolCallAccuracyLLMView) -> str:
        evaluations, missing = j.analysis.evaluations, j.analysis.missingTools or []
        head = f"Score {fmt(j.score)}:"
        if not evaluations:
            if missing:
                return f"{head} no tool was called, but the request needed {', '.join(missing)}."
            return f"{head} no tool was called, and none was needed."
        appropriate = count(evaluations, "wasAppropriate", True)
        text = f"{head} {appropriate} of {len(evaluations)} tool calls appropriate."
        wrong = [f"{e.toolCalled} ({e.reasoning})" for e in evaluations if not e.wasAppropriate]
        return text + listed("Inappropriate", wrong) + listed("Missing", missing, ", ")
