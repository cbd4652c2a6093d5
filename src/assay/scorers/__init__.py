"""Built-in scorers, one module per scorer (family).

Each module registers its scorer types when imported, all the same way:
``@register_scorer`` on a factory (code) or on a ``JudgeScorer`` class (judge). Importing
this package imports none of them: it registers a placeholder per type
(``BUILTIN_SCORERS``: type id -> module, as lm-eval's registry keeps ``"module:object"``
strings), and the registry imports a module the first time one of its
types is looked up. Listing names costs nothing; creating ``exact-match`` imports
``exact_match`` alone. Adding a scorer is adding a module and its line below
(``tests/scorers/test_catalogue.py`` checks that the two agree).
"""

from __future__ import annotations

from assay.scoring.registry import SCORER_TYPES

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
