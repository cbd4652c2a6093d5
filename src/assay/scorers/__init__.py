"""Built-in scorers, one module per scorer (family).

Each module registers its scorer types when imported, all the same way:
``@register_scorer`` on a factory (code) or on a ``JudgeScorer`` class (judge). Importing
this package imports none of them: it registers a placeholder per type
(``BUILTIN_SCORERS``: type id -> module, as lm-eval's registry keeps ``"module:object"``
strings), and the registry imports a module the first time one of its
types is looked up. Listing names costs nothing; creating ``exact-match`` imports
``exact_match`` alone. Adding a scorer is adding a module and its line below
(``tests/scorers/test_catalogue.py`` checks that the two agree).

This package is also the public place to declare a scorer of your own, as
``inspect_ai.scorer`` is Inspect's (docs/judge-scorers.md)::

    from assay.scorers import JudgeScorer, Prompt, View, register_scorer

``register_scorer`` plus the judge declaration kit: ``JudgeScorer``, ``Prompt``, ``View``,
the params bases (``JudgeScorerParams`` … ``ContextJudgeParams``), the required-input
checks (``needs_*``, ``Needs``), the answer checks (``one_per_item``, ``each_key_once``),
the score formulas (``share``, ``count``, ``weighted_share``) and the reason helpers
(``tally``, ``listed``, ``numbered``). They live in ``scorers/_lib``, which is private so it
can be rearranged; these names are the contract. Each is loaded on first use (``_PUBLIC``,
as ``assay/__init__.py`` does), so the registry importing this package for its
placeholders does not pay for the judge framework.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from assay.scoring.registry import SCORER_TYPES, register_scorer

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers
    from assay.scorers._lib.formulas import count, share, weighted_share
    from assay.scorers._lib.judge_common import (
        ContextJudgeParams,
        JudgeScorerParams,
        ReasonedJudgeParams,
        ScaledJudgeParams,
        numbered,
    )
    from assay.scorers._lib.judge_scorer import (
        JudgeScorer,
        Needs,
        Prompt,
        View,
        each_key_once,
        listed,
        needs_context,
        needs_ground_truth,
        needs_input,
        needs_output,
        one_per_item,
        tally,
    )

_FORMULAS = "assay.scorers._lib.formulas"
_JUDGE_COMMON = "assay.scorers._lib.judge_common"
_JUDGE_SCORER = "assay.scorers._lib.judge_scorer"

_PUBLIC: dict[str, str] = {
    "count": _FORMULAS,
    "share": _FORMULAS,
    "weighted_share": _FORMULAS,
    "ContextJudgeParams": _JUDGE_COMMON,
    "JudgeScorerParams": _JUDGE_COMMON,
    "ReasonedJudgeParams": _JUDGE_COMMON,
    "ScaledJudgeParams": _JUDGE_COMMON,
    "numbered": _JUDGE_COMMON,
    "JudgeScorer": _JUDGE_SCORER,
    "Needs": _JUDGE_SCORER,
    "Prompt": _JUDGE_SCORER,
    "View": _JUDGE_SCORER,
    "each_key_once": _JUDGE_SCORER,
    "listed": _JUDGE_SCORER,
    "needs_context": _JUDGE_SCORER,
    "needs_ground_truth": _JUDGE_SCORER,
    "needs_input": _JUDGE_SCORER,
    "needs_output": _JUDGE_SCORER,
    "one_per_item": _JUDGE_SCORER,
    "tally": _JUDGE_SCORER,
}
"""Each public name of the declaration kit and the module defining it, imported on first use."""

__all__ = [
    "BUILTIN_ALIASES",
    "BUILTIN_SCORERS",
    "ContextJudgeParams",
    "JudgeScorer",
    "JudgeScorerParams",
    "Needs",
    "Prompt",
    "ReasonedJudgeParams",
    "ScaledJudgeParams",
    "View",
    "count",
    "each_key_once",
    "listed",
    "needs_context",
    "needs_ground_truth",
    "needs_input",
    "needs_output",
    "numbered",
    "one_per_item",
    "register_scorer",
    "share",
    "tally",
    "weighted_share",
]


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


BUILTIN_SCORERS: dict[str, str] = {
    "answer-relevancy": "answer_relevancy",
    "answer-similarity": "answer_similarity",
    "bias": "bias",
    "check-called-tool": "checks",
    "check-did-not-call": "checks",
    "check-equals": "checks",
    "check-excludes": "checks",
    "check-includes": "checks",
    "check-matches": "checks",
    "check-max-tool-calls": "checks",
    "check-no-tool-errors": "checks",
    "check-similarity": "checks",
    "check-tool-order": "checks",
    "check-used-no-tools": "checks",
    "completeness": "completeness",
    "content-similarity": "content_similarity",
    "context-precision": "context_precision",
    "context-recall": "context_recall",
    "context-relevance": "context_relevance",
    "exact-match": "exact_match",
    "faithfulness": "faithfulness",
    "hallucination": "hallucination",
    "keyword-coverage": "keyword_coverage",
    "multi-turn-judge": "multi_turn_judge",
    "noise-sensitivity": "noise_sensitivity",
    "prompt-alignment": "prompt_alignment",
    "reward-model": "reward_model",
    "rubric": "rubric",
    "summarization": "summarization",
    "textual-difference": "textual_difference",
    "tone": "tone",
    "tool-call-accuracy-code": "tool_call_accuracy_code",
    "tool-call-accuracy-llm": "tool_call_accuracy_llm",
    "toxicity": "toxicity",
    "trajectory-accuracy-code": "trajectory_accuracy_code",
    "trajectory-accuracy-llm": "trajectory_accuracy_llm",
    "trajectory-code": "trajectory_code",
}
"""Every built-in scorer type and the module (of this package) that registers it."""

BUILTIN_ALIASES: dict[str, tuple[str, ...]] = {
    "check-called-tool": ("checks.calledTool",),
    "check-did-not-call": ("checks.didNotCall",),
    "check-equals": ("checks.equals",),
    "check-excludes": ("checks.excludes",),
    "check-includes": ("checks.includes",),
    "check-matches": ("checks.matches",),
    "check-max-tool-calls": ("checks.maxToolCalls",),
    "check-no-tool-errors": ("checks.noToolErrors",),
    "check-similarity": ("checks.similarity",),
    "check-tool-order": ("checks.toolOrder",),
    "check-used-no-tools": ("checks.usedNoTools",),
    "reward-model": ("reward",),
    "tone": ("tone-consistency",),
}
"""The aliases each type's module registers, so an alias finds its module too."""

for _type_id, _module in BUILTIN_SCORERS.items():
    SCORER_TYPES.register_lazy(
        _type_id, f"{__name__}.{_module}", aliases=BUILTIN_ALIASES.get(_type_id, ())
    )
