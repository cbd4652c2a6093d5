"""A run described as data (YAML or a dict), validated up front (``assay run CONFIG.yaml``).

One model for the file and the CLI flags or API fields (they override the file:
``run_config_from``), so a run is reproducible from its config and a typo (``concurency:``)
is an error naming the field, not a silently ignored key. Its settings map onto
``RunOptions`` (``RunConfig.run_options``): the config's ``timeout`` is the options'
``timeout_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from assay.config_file import ConfigError, anchor_paths, read_config_file, validate_config
from assay.operations.item_selection import ItemSelection
from assay.runner.hooks import RunHooks
from assay.runner.options import Backend, RunOptions
from assay.runner.result import RunResult
from assay.scoring.sync import run_sync


class RunConfigError(ConfigError):
    """The run config is invalid; the message names the file and field."""


class RunConfig(BaseModel):
    """A run: its data (a file or a stored dataset), target, scorers and settings."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    data: str | None = Field(default=None, description="A data file (JSONL, CSV, Parquet, HF dir).")
    dataset: str | None = Field(default=None, description="A stored dataset's name or id.")
    version: int | None = Field(default=None, ge=0, description="Dataset version to pin.")
    target: str | dict[str, Any] | None = Field(
        default=None,
        description="pkg.module:attr, or {type: model|scorer|...}; none: stored outputs.",
    )
    scorers: list[str | dict[str, Any]] = Field(min_length=1)
    concurrency: int = Field(default=8, ge=1)
    repeats: int = Field(default=1, ge=1)
    threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Pass level 0..1 on each scorer's normalized scale (a scorer config's "
        "own 'threshold' is on its own scale and wins).",
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds per item for the target call and for each scorer call.",
    )
    store: bool = True
    report: str | None = Field(default=None, description="Write an HTML report here.")
    json_path: str | None = Field(
        default=None, alias="json", description="Write JSON results here."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1, description="Run at most the first N items.")
    sample: int | None = Field(default=None, ge=1, description="Run a random sample of N items.")
    seed: int | None = Field(default=None, description="Seed of 'sample' (default 0).")
    ids: str | list[str] | None = Field(
        default=None, description="Run only these item ids ('a,b' or a list)."
    )
    require_calibrated: bool = Field(
        default=False,
        description="Stop before the first item unless every scorer has a passing "
        "calibration certificate matching its current fingerprint (`assay calibrate`).",
    )

    backend: Backend = Field(
        default="local",
        description="'local' (this process) or 'ray' (Ray workers over the store; "
        "pip install 'assay[ray]').",
    )
    ray_address: str | None = Field(
        default=None, description="Ray cluster to join (backend 'ray'); none: a local Ray."
    )
    workers: int | None = Field(default=None, ge=1, description="Ray workers (backend 'ray').")

    @model_validator(mode="after")
    def _one_source(self) -> RunConfig:
        if (self.data is None) == (self.dataset is None):
            raise ValueError("give exactly one of 'data' (a file) and 'dataset' (a stored dataset)")
        if self.dataset is not None and not self.store:
            raise ValueError("a stored dataset's run is always stored ('store: false' given)")
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        if self.backend != "ray" and (self.ray_address is not None or self.workers is not None):
            raise ValueError("'ray_address' and 'workers' need 'backend: ray'")
        if self.backend == "ray" and not self.store:
            raise ValueError("backend 'ray' stores results from its workers ('store: false' given)")
        if self.seed is not None and self.sample is None:
            raise ValueError("'seed' needs 'sample'")
        self.selection()  # an empty 'ids' fails here, with the key named
        return self

    def selection(self) -> ItemSelection:
        """The subset of the data this run runs (all of it unless limit/sample/ids)."""
        try:
            return ItemSelection(ids=self.ids, sample=self.sample, seed=self.seed, limit=self.limit)
        except ValidationError as exc:
            raise ValueError(f"'ids': {exc.errors()[0]['msg']}") from None

    def run_options(
        self, *, progress: bool | None = None, hooks: RunHooks | None = None
    ) -> RunOptions:
        """This config's settings as ``RunOptions`` (plus the caller's progress and hooks)."""
        return RunOptions(
            concurrency=self.concurrency,
            repeats=self.repeats,
            threshold=self.threshold,
            timeout_s=self.timeout,
            name=self.name,
            metadata=self.metadata,
            progress=progress,
            hooks=hooks,
            backend=self.backend,
            ray_address=self.ray_address,
            workers=self.workers,
        )


def load_run_config(path: str | Path, **overrides: Any) -> RunConfig:
    """Read a YAML run config; ``overrides`` (CLI flags that were given) win over the file.

    Relative ``data``/``report`` paths are relative to the config file's folder.
    """
    path = Path(path)
    raw = read_config_file(path, error=RunConfigError)
    anchor_paths(raw, ("data", "report", "json"), path.parent)
    return make_run_config({**raw, **overrides}, source=str(path))


def run_config_from(path: str | Path | None = None, **fields: Any) -> RunConfig:
    """The run config of a YAML file (optional) and fields given separately (CLI flags, an
    API request): a field given (not ``None``) overrides the file's, and a data source given
    (``data`` or ``dataset``) replaces the file's source of the other kind. Without a file the
    fields alone make the config."""
    given = {key: value for key, value in fields.items() if value is not None}
    if path is None:
        return make_run_config(given, source="flags")
    if ("data" in given) != ("dataset" in given):
        given["dataset" if "data" in given else "data"] = None
    return load_run_config(path, **given)


_FLAGS = {
    "scorers": "--scorer TYPE (repeatable)",
    "data": "--data FILE",
    "dataset": "--dataset NAME",
    "target": "--target pkg.module:attr",
}


def make_run_config(raw: dict[str, Any], *, source: str = "run config") -> RunConfig:
    """Validate a run config; the error names the key (and its flag) in the user's words."""
    return validate_config(RunConfig, raw, source=source, error=RunConfigError, explain=_explain)


def _explain(error: ErrorDetails) -> str | None:
    """A missing key named with the CLI flag that gives it (``no scorer given: ...``)."""
    top = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] != "missing":
        return None
    if top == "scorers":
        return (
            f"no scorer given: pass {_FLAGS['scorers']} or set 'scorers:' in the config "
            "file (see `assay scorers list`)"
        )
    where = ".".join(str(part) for part in error["loc"])
    flag = f" (flag {_FLAGS[top]})" if top in _FLAGS else ""
    return f"missing key {where!r}{flag}"


async def run_config_async(
    config: RunConfig, *, progress: bool | None = None, hooks: RunHooks | None = None
) -> RunResult:
    """Execute ``config``: stored (default) or in memory."""
    from assay.runner.api import run_evals_async

    options = config.run_options(progress=progress, hooks=hooks)
    selection = config.selection()
    if config.require_calibrated:
        from assay.calibration.certificates import require_calibrated

        require_calibrated(config.scorers)
    if config.dataset is not None:
        from assay.operations.stored_runs import run_dataset_async

        return await run_dataset_async(
            config.dataset,
            config.target,
            config.scorers,
            version=config.version,
            options=options,
            selection=selection,
        )
    assert config.data is not None
    if config.store:
        from assay.operations.stored_runs import run_stored_async

        return await run_stored_async(
            config.data, config.target, config.scorers, options=options, selection=selection
        )
    if selection.selects_all:
        return await run_evals_async(config.data, config.target, config.scorers, options=options)
    from assay.datasets.load import load_items
    from assay.operations.item_selection import select_items

    chosen = list(select_items(load_items(config.data), selection))
    options = RunOptions.of(
        options, metadata={**options.metadata, "selection": selection.metadata()}
    )
    return await run_evals_async(chosen, config.target, config.scorers, options=options)


def run_config(
    config: RunConfig, *, progress: bool | None = None, hooks: RunHooks | None = None
) -> RunResult:
    """``run_config_async`` for synchronous code."""
    return run_sync(lambda: run_config_async(config, progress=progress, hooks=hooks))
