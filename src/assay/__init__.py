"""assay: evaluate LLM applications with scorers, LLM judges, datasets and runs.

The public surface is small on purpose::

    import assay

    sim = assay.create_scorer("content-similarity", ignore_case=True)
    print(sim.run_sync(input="What is 2+2?", output="4").score)

Every public name is loaded on first use (PEP 562 ``__getattr__``): ``import assay`` imports
no submodule, no pydantic model, no numpy, so a CLI, a notebook or a pytest plugin that
imports assay pays only for what it touches. ``from assay import Item`` works as ever.

Judge models: a ``JudgeConfig(model="openai/gpt-4o-mini")`` resolves its string with
``assay.scoring.steps.DEFAULT_MODEL_RESOLVER`` (``assay.models.resolve:LazyModel``), loaded
by name on first use, the way registries load their built-ins.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers
    from assay.analysis.compare import compare_runs
    from assay.analysis.report_html import write_html_report
    from assay.calibration.certificates import calibration_status, certificate_for
    from assay.calibration.run import calibrate, calibrate_async
    from assay.datasets.load import load_items
    from assay.live import monitor
    from assay.models.base import ChatMessage, Model, ModelResponse, ModelSettings
    from assay.operations.datasets import import_file
    from assay.operations.stored_runs import (
        compare_stored,
        resume_run,
        resume_run_async,
        run_dataset,
        run_dataset_async,
        run_stored,
        run_stored_async,
    )
    from assay.optimize import optimize, resume_optimization
    from assay.optimize.judge import optimize_judge
    from assay.rounding import round2
    from assay.runner.api import run_evals, run_evals_async
    from assay.runner.hooks import RunHooks
    from assay.runner.options import RunOptions
    from assay.runner.result import RunResult
    from assay.scoring.context import NotScorable, ScorerCall, StepContext, not_scorable
    from assay.scoring.judge import JudgeStepError
    from assay.scoring.registry import (
        ScorerConfig,
        ScorerParams,
        ScorerParamsError,
        ScorerType,
        ScorerTypeInfo,
        UnknownScorerError,
        create_scorer,
        get_scorer_type,
        list_scorers,
        register_scorer,
    )
    from assay.scoring.score_value import Score
    from assay.scoring.scorer import Scorer, ScorerDefinitionError
    from assay.scoring.steps import FunctionStep, JudgeConfig, JudgeStep, judge_step
    from assay.store import open_store
    from assay.summary.aggregations import corpus_aggregation, register_aggregation
    from assay.targets.resolve import resolve_target
    from assay.testing.scripted import ScriptedModel
    from assay.types import (
        Item,
        ItemResult,
        JudgeCall,
        RunInfo,
        RunRecord,
        RunSummary,
        ScoreError,
        ScoreResult,
        ScorerSummary,
        Usage,
        ValueSummary,
        normalize_score,
    )

_LAZY = {
    "compare_runs": "assay.analysis.compare",
    "write_html_report": "assay.analysis.report_html",
    "load_items": "assay.datasets.load",
    "monitor": "assay.live",
    "ChatMessage": "assay.models.base",
    "Model": "assay.models.base",
    "ModelResponse": "assay.models.base",
    "ModelSettings": "assay.models.base",
    "calibrate": "assay.calibration.run",
    "calibrate_async": "assay.calibration.run",
    "calibration_status": "assay.calibration.certificates",
    "certificate_for": "assay.calibration.certificates",
    "import_file": "assay.operations.datasets",
    "compare_stored": "assay.operations.stored_runs",
    "resume_run": "assay.operations.stored_runs",
    "resume_run_async": "assay.operations.stored_runs",
    "run_dataset": "assay.operations.stored_runs",
    "run_dataset_async": "assay.operations.stored_runs",
    "run_stored": "assay.operations.stored_runs",
    "run_stored_async": "assay.operations.stored_runs",
    "optimize": "assay.optimize",
    "resume_optimization": "assay.optimize",
    "optimize_judge": "assay.optimize.judge",
    "round2": "assay.rounding",
    "run_evals": "assay.runner.api",
    "run_evals_async": "assay.runner.api",
    "RunHooks": "assay.runner.hooks",
    "RunOptions": "assay.runner.options",
    "RunResult": "assay.runner.result",
    "NotScorable": "assay.scoring.context",
    "ScorerCall": "assay.scoring.context",
    "StepContext": "assay.scoring.context",
    "not_scorable": "assay.scoring.context",
    "JudgeStepError": "assay.scoring.judge",
    "ScorerConfig": "assay.scoring.registry",
    "ScorerParams": "assay.scoring.registry",
    "ScorerParamsError": "assay.scoring.registry",
    "ScorerType": "assay.scoring.registry",
    "ScorerTypeInfo": "assay.scoring.registry",
    "UnknownScorerError": "assay.scoring.registry",
    "create_scorer": "assay.scoring.registry",
    "get_scorer_type": "assay.scoring.registry",
    "list_scorers": "assay.scoring.registry",
    "register_scorer": "assay.scoring.registry",
    "Score": "assay.scoring.score_value",
    "Scorer": "assay.scoring.scorer",
    "ScorerDefinitionError": "assay.scoring.scorer",
    "FunctionStep": "assay.scoring.steps",
    "JudgeConfig": "assay.scoring.steps",
    "JudgeStep": "assay.scoring.steps",
    "judge_step": "assay.scoring.steps",
    "open_store": "assay.store",
    "corpus_aggregation": "assay.summary.aggregations",
    "register_aggregation": "assay.summary.aggregations",
    "resolve_target": "assay.targets.resolve",
    "ScriptedModel": "assay.testing.scripted",
    "Item": "assay.types",
    "ItemResult": "assay.types",
    "JudgeCall": "assay.types",
    "RunInfo": "assay.types",
    "RunRecord": "assay.types",
    "RunSummary": "assay.types",
    "ScoreError": "assay.types",
    "ScoreResult": "assay.types",
    "ScorerSummary": "assay.types",
    "Usage": "assay.types",
    "ValueSummary": "assay.types",
    "normalize_score": "assay.types",
}
"""Each public name and the module defining it, imported when the name is first used."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if name != "optimize":  # the optimize package binds itself here (see assay.optimize)
        globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "ChatMessage",
    "FunctionStep",
    "Item",
    "ItemResult",
    "JudgeCall",
    "JudgeConfig",
    "JudgeStep",
    "JudgeStepError",
    "Model",
    "ModelResponse",
    "ModelSettings",
    "NotScorable",
    "RunHooks",
    "RunInfo",
    "RunOptions",
    "RunRecord",
    "RunResult",
    "RunSummary",
    "Score",
    "ScoreError",
    "ScoreResult",
    "Scorer",
    "ScorerCall",
    "ScorerConfig",
    "ScorerDefinitionError",
    "ScorerParams",
    "ScorerParamsError",
    "ScorerSummary",
    "ScorerType",
    "ScorerTypeInfo",
    "ScriptedModel",
    "StepContext",
    "UnknownScorerError",
    "Usage",
    "ValueSummary",
    "__version__",
    "calibrate",
    "calibrate_async",
    "calibration_status",
    "certificate_for",
    "compare_runs",
    "compare_stored",
    "corpus_aggregation",
    "create_scorer",
    "get_scorer_type",
    "import_file",
    "judge_step",
    "list_scorers",
    "load_items",
    "monitor",
    "normalize_score",
    "not_scorable",
    "open_store",
    "optimize",
    "optimize_judge",
    "register_aggregation",
    "register_scorer",
    "resolve_target",
    "resume_optimization",
    "resume_run",
    "resume_run_async",
    "round2",
    "run_dataset",
    "run_dataset_async",
    "run_evals",
    "run_evals_async",
    "run_stored",
    "run_stored_async",
    "write_html_report",
]
