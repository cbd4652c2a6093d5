"""Turn what a user wrote (an import path, an object, a config dict) into a ``Target``.

Accepted forms:

- ``None`` → score the items' stored outputs;
- ``"pkg.module:attr"`` → import it (the current directory is importable), then as below;
- a ``Scorer`` → judge calibration (``ScorerTarget``);
- an object with ``generate`` → agent; with ``run`` → workflow; a callable → function;
- ``{"type": "model", "model": "openai/gpt-4o-mini", "prompt": "...", "system": ...}``;
- ``{"type": "scorer", "scorer": "faithfulness" | {"type": ..., "params": ...}}``;
- ``{"type": "callable" | "agent" | "workflow", "ref": "pkg.module:attr"}``.

A callable, agent or workflow config may add ``output_key``: a dotted path (``"answer"``,
``"choices.0.text"``) to the output inside the object it returns, or (from Python) a function
of that object; ``output_fn: "pkg.module:attr"`` names such a function by import path.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any, cast

from assay.models.base import ModelSettings
from assay.scoring.registry import create_scorer
from assay.scoring.scorer import Scorer
from assay.targets.agent import AgentTarget, WorkflowTarget
from assay.targets.base import OutputKey, Target
from assay.targets.callable import CallableTarget
from assay.targets.model_prompt import ModelPromptTarget
from assay.targets.scorer import ScorerTarget
from assay.targets.stored import StoredOutputTarget
from assay.types import TargetSpec


class TargetResolutionError(ValueError):
    """The target could not be built; the message says what was wrong with it."""


def import_object(ref: str) -> Any:
    """Import ``pkg.module:attr`` (``attr`` may be dotted). The cwd is importable."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise TargetResolutionError(f"target {ref!r}: expected 'package.module:attribute'")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetResolutionError(
            f"target {ref!r}: cannot import {module_name!r}: {exc}"
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise TargetResolutionError(
                f"target {ref!r}: module {module_name!r} has no attribute {attr!r}"
            ) from exc
    return obj


def _wrap(obj: Any, ref: str | None) -> Target:
    if isinstance(obj, Scorer):
        return ScorerTarget(obj, ref=ref)
    if isinstance(obj, Target):
        return obj
    if callable(getattr(obj, "generate", None)) and not isinstance(obj, type):
        return AgentTarget(obj, ref=ref)
    if callable(getattr(obj, "run", None)) and not isinstance(obj, type):
        return WorkflowTarget(obj, ref=ref)
    if callable(obj):
        return CallableTarget(obj, ref=ref)
    raise TargetResolutionError(
        f"target {ref or obj!r}: not a function, agent (generate), workflow (run) or scorer"
    )


def _from_mapping(config: Mapping[str, Any]) -> Target:
    kind = config.get("type") or config.get("kind")
    if kind == "model":
        for key in ("model", "prompt"):
            if not config.get(key):
                raise TargetResolutionError(f"model target: missing field {key!r}")
        settings = config.get("settings")
        return ModelPromptTarget(
            str(config["prompt"]),
            str(config["model"]),
            system=config.get("system"),
            settings=ModelSettings.model_validate(settings) if settings else None,
            base_url=config.get("base_url"),
        )
    if kind == "scorer":
        scorer_config = config.get("scorer")
        if not scorer_config:
            raise TargetResolutionError("scorer target: missing field 'scorer'")
        if isinstance(scorer_config, str):
            scorer_config = {"type": scorer_config, "params": dict(config.get("params") or {})}
        return ScorerTarget(_scorer(scorer_config), ref=config.get("ref"))
    if kind in ("callable", "agent", "workflow"):
        ref = config.get("ref")
        if not isinstance(ref, str):
            raise TargetResolutionError(f"{kind} target: missing field 'ref' (pkg.module:attr)")
        obj = import_object(ref)
        output_key = _output_key(config, kind)
        wrapped = {"agent": AgentTarget, "workflow": WorkflowTarget}.get(kind)
        if wrapped:
            return wrapped(obj, ref=ref, output_key=output_key)
        return CallableTarget(obj, ref=ref, output_key=output_key)
    if kind == "stored-output":
        return StoredOutputTarget()
    raise TargetResolutionError(
        f"target config: unknown type {kind!r} (expected model, scorer, callable, agent, workflow)"
    )


def _output_key(config: Mapping[str, Any], kind: str) -> OutputKey | None:
    """The ``output_key`` (a dotted path or a function) or ``output_fn`` (an import path)."""
    key = config.get("output_key")
    fn_ref = config.get("output_fn")
    if key is not None and fn_ref is not None:
        raise TargetResolutionError(f"{kind} target: give 'output_key' or 'output_fn', not both")
    if fn_ref is not None:
        if not isinstance(fn_ref, str):
            raise TargetResolutionError(f"{kind} target: 'output_fn' must be 'pkg.module:attr'")
        fn = import_object(fn_ref)
        if not callable(fn):
            raise TargetResolutionError(f"{kind} target: output_fn {fn_ref!r} is not callable")
        return cast(OutputKey, fn)
    if key is None or callable(key):
        return cast(OutputKey | None, key)
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise TargetResolutionError(
            f"{kind} target: 'output_key' must be a dotted path such as 'answer' or "
            f"'result.text', got {key!r}"
        )
    return key


def _scorer(config: Any) -> Scorer:
    if isinstance(config, Scorer):
        return config
    try:
        return create_scorer(config)
    except (KeyError, ValueError) as exc:
        raise TargetResolutionError(f"scorer target: {exc}") from exc


def resolve_target(target: Any) -> Target:
    """Build a ``Target`` from any accepted form (see the module docstring)."""
    if target is None:
        return StoredOutputTarget()
    if isinstance(target, str):
        return _wrap(import_object(target), target)
    if isinstance(target, Mapping):
        return _from_mapping(target)
    return _wrap(target, None)


def target_from_spec(spec: TargetSpec) -> Target:
    """Re-create a stored run's target (``assay runs resume``)."""
    if spec.kind == "task":
        raise TargetResolutionError(
            f"this run's target is a benchmark task ({spec.label}); task runs are not resumed "
            "yet: run `assay tasks run` again (finished runs are kept)"
        )
    if spec.kind == "stored-output":
        return StoredOutputTarget()
    if spec.kind == "model":
        return _from_mapping({"type": "model", **spec.config})
    if spec.kind == "scorer" and spec.ref is None:
        if not spec.config:
            raise TargetResolutionError(
                "this run's scorer target was a custom Scorer object; pass it again to resume"
            )
        return ScorerTarget(_scorer(spec.config))
    if spec.ref is None:
        raise TargetResolutionError(
            f"this run's target ({spec.label}) was a Python object, not an import path; "
            "pass the target again to resume"
        )
    if spec.kind == "scorer":
        return _wrap(import_object(spec.ref), spec.ref)
    if "<" in str(spec.config.get("output_fn", "")):
        raise TargetResolutionError(
            f"this run's target ({spec.label}) picked its output with a Python function; "
            "pass the target again to resume"
        )
    return _from_mapping({**spec.config, "type": spec.kind, "ref": spec.ref})
