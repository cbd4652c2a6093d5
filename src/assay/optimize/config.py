"""``OptimizeConfig``: a prompt optimization described as data (YAML or keywords).

One validated model for the YAML file (``assay optimize CONFIG.yaml``), the Python call
(``assay.optimize(...)``) and what the store keeps, so an optimization can be resumed from
its stored config alone, and a typo (``max_metric_call:``) is an error that names the key
instead of a silently ignored setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.config_file import (
    ConfigError,
    anchor_paths,
    read_config_file,
    validate_config,
)
from assay.models.base import ModelSettings


class OptimizeConfigError(ConfigError):
    """The optimization config is invalid; the message names the file and the key
    (``key``: its dotted path, for the HTTP API's 422)."""


class DataRef(BaseModel):
    """One split's data: a file, or a stored dataset (pinned to a version when given)."""

    model_config = ConfigDict(extra="forbid")

    data: str | None = Field(default=None, description="A data file (JSONL, CSV, Parquet).")
    dataset: str | None = Field(default=None, description="A stored dataset's name or id.")
    version: int | None = Field(default=None, ge=0)
    sha256: str | None = Field(
        default=None,
        description="The data file's content hash, recorded when the optimization starts: a "
        "resume refuses a file that changed since.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> DataRef:
        if (self.data is None) == (self.dataset is None):
            raise ValueError("give exactly one of 'data' (a file) and 'dataset' (a stored dataset)")
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        if self.sha256 is not None and self.data is None:
            raise ValueError("'sha256' needs 'data'")
        return self

    @property
    def label(self) -> str:
        if self.dataset is not None:
            return f"dataset {self.dataset}" + (f" v{self.version}" if self.version else "")
        return str(self.data)


class Budget(BaseModel):
    """When to stop. GEPA checks between iterations, so one iteration may overshoot."""

    model_config = ConfigDict(extra="forbid")

    max_metric_calls: int | None = Field(
        default=None, ge=1, description="Per-example evaluations, seed and validation included."
    )
    max_iterations: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(
        default=None, gt=0, description="Task, judge and reflection spend (priced models)."
    )
    max_wall_time_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_limit(self) -> Budget:
        if all(
            v is None
            for v in (
                self.max_metric_calls,
                self.max_iterations,
                self.max_cost_usd,
                self.max_wall_time_s,
            )
        ):
            raise ValueError(
                "give at least one of max_metric_calls, max_iterations, max_cost_usd, "
                "max_wall_time_s (an optimization without a budget never stops)"
            )
        return self


class SearchSettings(BaseModel):
    """The settings of GEPA's search itself, whatever is optimized: the reflection model,
    the budget, selection, minibatches, seed, concurrency.

    Why a base of its own: a task prompt (``OptimizeSettings``) and a judge's prompt
    (``optimize.judge_config``) are searched by the same optimizer, session and store; only
    what a candidate is run on and how a row is scored differ."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    reflection_model: str = Field(min_length=1, description="The model that rewrites prompts.")
    reflection_base_url: str | None = None
    reflection_settings: ModelSettings | None = None
    budget: Budget
    candidate_selection: Literal["pareto", "current_best"] = "pareto"
    frontier: Literal["instance", "objective", "hybrid"] = "instance"
    minibatch_size: int = Field(default=3, ge=1)
    module_selector: Literal["round_robin", "all"] = "round_robin"
    feedback_threshold: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="Rows scoring below this go into the reflective dataset.",
    )
    skip_perfect_score: bool = True
    stop_at_perfect: bool = Field(
        default=True,
        description="Stop once a candidate scores 1.0 on validation: nothing can beat it, and "
        "GEPA would otherwise keep spending minibatch evaluations on skipped iterations.",
    )
    seed: int = 0
    concurrency: int = Field(default=16, ge=1)
    timeout: float | None = Field(default=None, gt=0, description="Seconds per item.")


class OptimizeSettings(SearchSettings):
    """Every setting of a task-prompt optimization except where its data and GEPA's state
    live.

    Why a base class: the YAML/Python config (``OptimizeConfig``: files or stored datasets,
    a ``run_dir`` of the user's choosing) and the HTTP request (``optimize.requests``:
    stored datasets or inline items, a ``run_dir`` the server chooses) share every other
    field, defined once here so the two cannot drift apart."""

    candidate: dict[str, str] = Field(
        min_length=1,
        description="The seed candidate: named text components (system prompt, instructions, "
        "few-shot block, answer format). They form the system message, in this order, "
        "separated by a blank line.",
    )
    prompt: str = Field(
        default="{{ input }}",
        description="The user message: a Jinja2 template over the item (input, its keys, "
        "expected_output, context, metadata, id).",
    )
    task_model: str = Field(min_length=1, description="The model the candidate prompts.")
    task_base_url: str | None = None
    task_settings: ModelSettings | None = None
    val_fraction: float = Field(
        default=0.5, gt=0.0, lt=1.0, description="With no 'val': the share of 'train' held out."
    )
    scorers: list[str | dict[str, Any]] = Field(min_length=1)

    @field_validator("candidate")
    @classmethod
    def _components_named(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if not key.strip():
                raise ValueError("a component needs a non-empty name")
            if not isinstance(text, str):
                raise ValueError(f"component {key!r} must be text")
        return value


class OptimizeConfig(OptimizeSettings):
    """A prompt optimization: what is optimized, on which data, scored how, within what."""

    train: DataRef
    val: DataRef | None = Field(
        default=None, description="Validation split; none: a seeded split of 'train'."
    )
    test: DataRef | None = Field(
        default=None, description="Held-out split the winner is checked on (never selected on)."
    )
    run_dir: str | None = Field(
        default=None, description="GEPA's state folder (default .assay/optimizations/ID)."
    )


def load_optimize_config(path: str | Path, **overrides: Any) -> OptimizeConfig:
    """Read a YAML optimization config; relative data paths and ``run_dir`` are relative to
    its folder."""
    path = Path(path)
    raw = read_config_file(path, error=OptimizeConfigError)
    folder = path.resolve().parent
    for split in ("train", "val", "test"):
        ref = raw.get(split)
        if isinstance(ref, str):
            ref = raw[split] = {"data": ref}
        if isinstance(ref, dict):
            anchor_paths(ref, ("data",), folder)
    anchor_paths(raw, ("run_dir",), folder)
    return make_optimize_config({**raw, **overrides}, source=str(path))


def make_optimize_config(raw: dict[str, Any], *, source: str = "optimize config") -> OptimizeConfig:
    """Validate ``raw``; the error names the key (``budget.max_metric_calls``) and, for an
    unknown key, the closest allowed one."""
    raw = dict(raw)
    for split in ("train", "val", "test"):
        if isinstance(raw.get(split), str):
            raw[split] = {"data": raw[split]}
    return validate_config(
        OptimizeConfig,
        raw,
        source=source,
        error=OptimizeConfigError,
        nested={"budget": Budget, "train": DataRef, "val": DataRef, "test": DataRef},
    )
