"""Claim extraction and context resolution shared by faithfulness and hallucination.

Both scorers extract the response's claims with the same prompt and judge them against the
same context (the run's, the param's, or the reference's legacy tool results).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from assay.scorers._lib.judge_common import context_list, data_block
from assay.scoring.context import StepContext


def legacy_tool_results(output: Any) -> list[str]:
    """The reference's fallback context: ``JSON.stringify(result)`` of every legacy
    ``content.toolInvocations`` entry in state ``"result"`` on every assistant message."""
    if not isinstance(output, list):
        return []
    found: list[str] = []
    for message in output:
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        invocations = content.get("toolInvocations") if isinstance(content, Mapping) else None
        if not isinstance(invocations, list):
            continue
        for invocation in invocations:
            if (
                isinstance(invocation, Mapping)
                and invocation.get("state") == "result"
                and "result" in invocation
            ):
                found.append(
                    json.dumps(
                        invocation["result"],
                        ensure_ascii=False,
                        separators=(",", ":"),
                        default=str,
                    )
                )
    return found


def resolve_context(ctx: StepContext, param_context: list[str] | None, scorer: str) -> list[str]:
    """Passages from the run's context, else the param, else the legacy tool results.

    Raises ``ValueError`` when none of them has a passage: a score against nothing would
    only measure the judge.
    """
    for source in (context_list(ctx.call.context), list(param_context or [])):
        if source:
            return source
    tool_results = legacy_tool_results(ctx.call.output)
    if tool_results:
        return tool_results
    raise ValueError(
        f"{scorer} needs context: pass context=[...] to the run, set the 'context' param, "
        "or score an output whose assistant messages carry tool results"
    )


def claims_prompt(output_text: str) -> str:
    """The claim-extraction prompt (shared with the hallucination scorer)."""
    return (
        "List the claims the response makes: every factual statement and every speculative "
        "one, each as a short self-contained sentence. No claims: [].\n\n"
        + data_block("response", output_text)
    )


def fmt(value: float) -> str:
    """A score as the reference prints it (``0.67``, ``1``, ``10``)."""
    return f"{value:g}"
