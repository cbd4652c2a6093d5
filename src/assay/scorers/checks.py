"""Quick checks: small binary assertions on the assistant's text and tool calls.

Parity with the reference's ``checks.*`` namespace. Texts come from assistant messages
only (a plain string output is one assistant text). Each check is its own scorer type
(``check-includes`` ...) with the reference's ``checks.includes`` spelling as an alias.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, field_validator

from assay.messages.chat import extract_agent_response_messages, output_texts
from assay.messages.tool_calls import all_tool_invocations, extract_tool_calls
from assay.patterns import PatternError, compile_user_pattern
from assay.scorers._lib.dice import compare_two_strings
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


def assistant_texts(output: Any) -> list[str]:
    """Assistant texts of the output: every assistant message of a list, else the text."""
    if isinstance(output, list):
        return extract_agent_response_messages(output)
    return output_texts(output)


def _check(type_id: str, test: Callable[[StepContext], tuple[bool, dict[str, Any]]]) -> Scorer:
    """A check scorer: ``test`` returns (passed, details); score is 1.0 or 0.0."""

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        passed, details = test(ctx)
        return {"passed": passed, **details}

    return (
        Scorer(type_id, description=f"quick check {type_id}")
        .preprocess(preprocess)
        .score(lambda ctx: 1.0 if ctx.preprocess_result["passed"] else 0.0)
    )


def _fold(text: str, ignore_case: bool) -> str:
    return text.lower() if ignore_case else text


# ----------------------------------------------------------------------------- text checks
class TextCheckParams(ScorerParams):
    expected: str = Field(description="The text to look for.")
    ignore_case: bool = Field(default=True, description="Compare case-insensitively.")


@register_scorer(
    "check-includes",
    label="Check: includes",
    description="1 if the assistant's text contains `expected`.",
    params=TextCheckParams,
    kind="check",
    reference="checks.includes (check-includes)",
    aliases=("checks.includes",),
)
def build_includes(params: TextCheckParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        text = " ".join(assistant_texts(ctx.call.output))
        found = _fold(params.expected, params.ignore_case) in _fold(text, params.ignore_case)
        return found, {"text": text}

    return _check("check-includes", test)


class ExcludesParams(ScorerParams):
    unwanted: str = Field(description="Text that must not appear.")
    ignore_case: bool = Field(default=True, description="Compare case-insensitively.")


@register_scorer(
    "check-excludes",
    label="Check: excludes",
    description="1 if the assistant's text does not contain `unwanted`.",
    params=ExcludesParams,
    kind="check",
    reference="checks.excludes (check-excludes)",
    aliases=("checks.excludes",),
)
def build_excludes(params: ExcludesParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        text = " ".join(assistant_texts(ctx.call.output))
        found = _fold(params.unwanted, params.ignore_case) in _fold(text, params.ignore_case)
        return not found, {"text": text}

    return _check("check-excludes", test)


@register_scorer(
    "check-equals",
    label="Check: equals",
    description="1 if the assistant's text equals `expected`.",
    params=TextCheckParams,
    kind="check",
    reference="checks.equals (check-equals)",
    aliases=("checks.equals",),
)
def build_equals(params: TextCheckParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        text = "".join(assistant_texts(ctx.call.output))
        equal = _fold(text, params.ignore_case) == _fold(params.expected, params.ignore_case)
        return equal, {"text": text}

    return _check("check-equals", test)


_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "y": 0, "u": 0}


class MatchesParams(ScorerParams):
    regex: str = Field(description="A regular expression (JavaScript-style source).")
    flags: str = Field(default="", description="JavaScript regex flags: i, m, s (g, y, u ignored).")
    exact: bool = Field(default=False, description="Anchor the pattern: the whole text must match.")

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, value: str) -> str:
        unknown = sorted(set(value) - set(_JS_FLAGS))
        if unknown:
            raise ValueError(
                f"unknown regex flag(s) {''.join(unknown)!r}; allowed: i, m, s, g, y, u"
            )
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        # re.error, a huge repeat count and deep nesting alike: the user's pattern, never a 500
        try:
            compile_user_pattern(value)
        except PatternError as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


@register_scorer(
    "check-matches",
    label="Check: matches",
    description="1 if the assistant's text matches the regular expression.",
    params=MatchesParams,
    kind="check",
    reference="checks.matches (check-matches)",
    aliases=("checks.matches",),
)
def build_matches(params: MatchesParams) -> Scorer:
    flags = 0
    for flag in params.flags:
        flags |= _JS_FLAGS[flag]
    source = f"^(?:{params.regex})$" if params.exact else params.regex
    pattern = re.compile(source, flags)

    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        text = "".join(assistant_texts(ctx.call.output))
        return pattern.search(text) is not None, {"text": text}

    return _check("check-matches", test)


class SimilarityParams(ScorerParams):
    expected: str = Field(description="The text to compare with.")
    threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="If set, score 1 when similarity >= threshold."
    )
    ignore_case: bool = Field(default=True, description="Compare case-insensitively.")


@register_scorer(
    "check-similarity",
    label="Check: similarity",
    description="Bigram Dice similarity with `expected`; binary when a threshold is set.",
    params=SimilarityParams,
    kind="check",
    reference="checks.similarity (check-similarity)",
    aliases=("checks.similarity",),
)
def build_similarity(params: SimilarityParams) -> Scorer:
    def preprocess(ctx: StepContext) -> dict[str, Any]:
        text = " ".join(assistant_texts(ctx.call.output))
        similarity = compare_two_strings(
            _fold(text, params.ignore_case), _fold(params.expected, params.ignore_case)
        )
        return {"text": text, "similarity": similarity}

    def score(ctx: StepContext) -> float:
        similarity: float = ctx.preprocess_result["similarity"]
        if params.threshold is None:
            return similarity
        return 1.0 if similarity >= params.threshold else 0.0

    return Scorer("check-similarity").preprocess(preprocess).score(score)


# ----------------------------------------------------------------------------- tool checks
def _tools(ctx: StepContext) -> list[str]:
    return extract_tool_calls(ctx.call.output).tools


class CalledToolParams(ScorerParams):
    name: str = Field(description="Tool name.")
    times: int = Field(default=1, ge=1, description="Minimum number of calls.")


@register_scorer(
    "check-called-tool",
    label="Check: called tool",
    description="1 if the tool was called at least `times` times.",
    params=CalledToolParams,
    kind="check",
    reference="checks.calledTool (check-called-tool)",
    aliases=("checks.calledTool",),
)
def build_called_tool(params: CalledToolParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        tools = _tools(ctx)
        count = tools.count(params.name)
        return count >= params.times, {"tools": tools, "count": count}

    return _check("check-called-tool", test)


class ToolNameParams(ScorerParams):
    name: str = Field(description="Tool name.")


@register_scorer(
    "check-did-not-call",
    label="Check: did not call",
    description="1 if the tool was never called.",
    params=ToolNameParams,
    kind="check",
    reference="checks.didNotCall (check-did-not-call)",
    aliases=("checks.didNotCall",),
)
def build_did_not_call(params: ToolNameParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        tools = _tools(ctx)
        return params.name not in tools, {"tools": tools}

    return _check("check-did-not-call", test)


class ToolOrderParams(ScorerParams):
    names: list[str] = Field(min_length=1, description="Tools expected in this relative order.")


@register_scorer(
    "check-tool-order",
    label="Check: tool order",
    description="1 if the expected tools were called in this order (others may interleave).",
    params=ToolOrderParams,
    kind="check",
    reference="checks.toolOrder (check-tool-order)",
    aliases=("checks.toolOrder",),
)
def build_tool_order(params: ToolOrderParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        tools = _tools(ctx)
        remaining = iter(tools)
        in_order = all(any(called == name for called in remaining) for name in params.names)
        return in_order, {"tools": tools}

    return _check("check-tool-order", test)


class MaxToolCallsParams(ScorerParams):
    max: int = Field(ge=0, description="Maximum number of tool calls.")


@register_scorer(
    "check-max-tool-calls",
    label="Check: max tool calls",
    description="1 if at most `max` tool calls were made.",
    params=MaxToolCallsParams,
    kind="check",
    reference="checks.maxToolCalls (check-max-tool-calls)",
    aliases=("checks.maxToolCalls",),
)
def build_max_tool_calls(params: MaxToolCallsParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        tools = _tools(ctx)
        return len(tools) <= params.max, {"tools": tools, "count": len(tools)}

    return _check("check-max-tool-calls", test)


@register_scorer(
    "check-used-no-tools",
    label="Check: used no tools",
    description="1 if no tool was called.",
    kind="check",
    reference="checks.usedNoTools (check-used-no-tools)",
    aliases=("checks.usedNoTools",),
)
def build_used_no_tools(params: ScorerParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        tools = _tools(ctx)
        return not tools, {"tools": tools}

    return _check("check-used-no-tools", test)


def _is_tool_error(invocation: Mapping[str, Any]) -> bool:
    result = invocation.get("result")
    result_error = isinstance(result, Mapping) and bool(result.get("error"))
    return (
        invocation.get("state") in ("call", "output-error")
        or invocation.get("isError") is True
        or result_error
    )


@register_scorer(
    "check-no-tool-errors",
    label="Check: no tool errors",
    description="1 if no tool call failed, errored, or was left unanswered.",
    kind="check",
    reference="checks.noToolErrors (check-no-tool-errors)",
    aliases=("checks.noToolErrors",),
)
def build_no_tool_errors(params: ScorerParams) -> Scorer:
    def test(ctx: StepContext) -> tuple[bool, dict[str, Any]]:
        failed = [
            str(inv.get("toolName"))
            for inv in all_tool_invocations(ctx.call.output)
            if _is_tool_error(inv)
        ]
        return not failed, {"failedTools": failed}

    return _check("check-no-tool-errors", test)
