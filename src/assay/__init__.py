"""assay: evaluate LLM applications with scorers, LLM judges, datasets and runs.

The public surface is small on purpose::

    import assay

    sim = assay.create_scorer("content-similarity", ignore_case=True)
    print(sim.run_sync(input="What is 2+2?", output="4").score)
"""

from __future__ import annotations

from assay.models.base import ChatMessage, Model, ModelResponse, ModelSettings
from assay.models.scripted import ScriptedModel
from assay.scoring.context import NotScorable, ScorerRun, StepContext, not_scorable
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
from assay.scoring.rounding import round2
from assay.scoring.scorer import Scorer, ScorerDefinitionError
from assay.scoring.steps import FunctionStep, JudgeConfig, JudgeStep, judge_step
from assay.types import JudgeCall, ScoreError, ScoreResult, Usage

__version__ = "0.1.0"

__all__ = [
    "ChatMessage",
    "FunctionStep",
    "JudgeCall",
    "JudgeConfig",
    "JudgeStep",
    "JudgeStepError",
    "Model",
    "ModelResponse",
    "ModelSettings",
    "NotScorable",
    "ScoreError",
    "ScoreResult",
    "Scorer",
    "ScorerConfig",
    "ScorerDefinitionError",
    "ScorerParams",
    "ScorerParamsError",
    "ScorerRun",
    "ScorerType",
    "ScorerTypeInfo",
    "ScriptedModel",
    "StepContext",
    "UnknownScorerError",
    "Usage",
    "__version__",
    "create_scorer",
    "get_scorer_type",
    "judge_step",
    "list_scorers",
    "not_scorable",
    "register_scorer",
    "round2",
]
