"""assay: evaluate LLM applications with scorers, LLM judges, datasets and runs.

The public surface is small on purpose::

    import assay

    sim = assay.create_scorer("content-similarity", ignore_case=True)
    print(sim.run_sync(input="What is 2+2?", output="4").score)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.models.base import ChatMessage, Model, ModelResponse, ModelSettings
from assay.models.resolve import LazyModel
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
from assay.scoring.steps import (
    FunctionStep,
    JudgeConfig,
    JudgeStep,
    judge_step,
    set_model_resolver,
)
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

# The composition root: scoring knows only the Model protocol; model strings in a JudgeConfig
# ("openai/gpt-4o-mini") become lazily resolved models of assay.models.
set_model_resolver(LazyModel)

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers
    from assay.analysis.compare import compare_runs
    from assay.analysis.report_html import write_html_report
    from assay.datasets.load import load_items
    from assay.live import monitor
    from assay.operations.calibrate import calibrate, calibrate_async
    from assay.operations.certificates import calibration_status, certificate_for
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
    from assay.store import open_store
    from assay.summary.aggregations import corpus_aggregation, register_aggregation

_LAZY = {
    "open_store": "assay.store",
    "run_dataset": "assay.operations.stored_runs",
    "run_dataset_async": "assay.operations.stored_runs",
    "run_stored": "assay.operations.stored_runs",
    "run_stored_async": "assay.operations.stored_runs",
    "resume_run": "assay.operations.stored_runs",
    "resume_run_async": "assay.operations.stored_runs",
    "compare_runs": "assay.analysis.compare",
    "compare_stored": "assay.operations.stored_runs",
    "calibrate": "assay.operations.calibrate",
    "calibrate_async": "assay.operations.calibrate",
    "calibration_status": "assay.operations.certificates",
    "certificate_for": "assay.operations.certificates",
    "import_file": "assay.operations.datasets",
    "load_items": "assay.datasets.load",
    "write_html_report": "assay.analysis.report_html",
    "register_aggregation": "assay.summary.aggregations",
    "corpus_aggregation": "assay.summary.aggregations",
    "optimize": "assay.optimize",
    "resume_optimization": "assay.optimize",
    "optimize_judge": "assay.optimize.judge",
    "monitor": "assay.live",
}
"""Names whose modules pull in SQLAlchemy or numpy: imported on first use, so a script that
only scores does not pay for the database layer."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


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
