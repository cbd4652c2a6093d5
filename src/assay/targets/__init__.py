"""Targets turn an item's input into an output: callables, model prompts, agents,
workflows, scorers (judge calibration), or the item's own stored output."""

from __future__ import annotations

from assay.targets.agent import AgentTarget, WorkflowTarget
from assay.targets.base import OutputKeyError, Target, TargetOutput, target_output
from assay.targets.callable import CallableTarget
from assay.targets.model_prompt import ModelPromptTarget
from assay.targets.resolve import TargetResolutionError, resolve_target, target_from_spec
from assay.targets.scorer import ScorerTarget
from assay.targets.stored import StoredOutputTarget

__all__ = [
    "AgentTarget",
    "CallableTarget",
    "ModelPromptTarget",
    "OutputKeyError",
    "ScorerTarget",
    "StoredOutputTarget",
    "Target",
    "TargetOutput",
    "TargetResolutionError",
    "WorkflowTarget",
    "resolve_target",
    "target_from_spec",
    "target_output",
]
