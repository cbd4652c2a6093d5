"""Claim extraction and context resolution shared by faithfulness and hallucination.

Both scorers extract the response's claims with the same prompt and judge them against the
same context (the run's, the param's, or the reference's legacy tool results).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from assay.scorers._lib.judge_common import ReasonedJudgeParams, context_list, numbered
from assay.scorers._lib.judge_scorer import (
    AnyView,
    JudgeScorer,
    Prompt,
    View,
    needs_context,
    one_per_item,
)
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


NEEDS_CONTEXT = (
    "pass context=[...] to the run, set the 'context' param, or score an output whose "
    "assistant messages carry tool results"
)


class ClaimsParams(ReasonedJudgeParams):
    """Params of the claim-based context judges (faithfulness, hallucination)."""

    context: list[str] | None = Field(
        default=None,
        description="Context passages, used when the run has no context of its own.",
    )


class ResponseClaims(BaseModel):
    claims: list[str] = Field(description="The response's claims, in order; [] if none.")


def resolve_context(ctx: StepContext, param_context: list[str] | None) -> list[str]:
    """Passages from the run's context, else the param, else the legacy tool results; ``[]``
    when none has a passage (the scorers declare context as required: a score against
    nothing would only measure the judge)."""
    for source in (context_list(ctx.call.context), list(param_context or [])):
        if source:
            return source
    return legacy_tool_results(ctx.call.output)


CLAIMS_PROMPT: Prompt[AnyView, ResponseClaims] = Prompt(
    "List the claims the response makes: every factual statement and every speculative "
    "one, each as a short self-contained sentence. No claims: [].",
    ResponseClaims,
    inputs={"response": lambda j: j.output},
    description="Extract the response's claims",
)
"""The claim-extraction step (it never sees the context)."""


CP = TypeVar("CP", bound=ClaimsParams)
CA = TypeVar("CA", bound=BaseModel)
"""The verdicts answer model of a claims judge."""


class ClaimsJudge(JudgeScorer[CP, ResponseClaims, CA]):
    """Base of the claim judges: context required (run, param, legacy tool results), claims
    extracted first, then one verdict per claim against the numbered context."""

    params_model = ClaimsParams
    needs = (needs_context(NEEDS_CONTEXT),)
    preprocess = CLAIMS_PROMPT
    preview_notes = (
        "Needs context: the run's context, the 'context' param, or tool results in the "
        "output. 2 judge calls, 3 with reason='llm'."
    )

    @staticmethod
    def verdicts_prompt(
        instruction: str, output: type[CA]
    ) -> Prompt[View[Any, ResponseClaims, Any], CA]:
        """The verdict step: ``instruction`` over the numbered context and claims."""
        return Prompt(
            instruction,
            output,
            inputs={
                "context": lambda j: numbered(j.context),
                "claims": lambda j: numbered(j.pre.claims),
            },
            check=one_per_item(lambda j: j.pre.claims, "verdicts", "claim"),
            description="Judge each claim against the context",
        )

    def context(self, j: View[CP, ResponseClaims, CA]) -> list[str]:
        return resolve_context(j.ctx, j.params.context)
