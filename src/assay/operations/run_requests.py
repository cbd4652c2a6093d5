"""A run asked for as data (the server's ``POST /api/runs`` body), and its execution.

Unlike ``RunConfig`` a ``RunRequest`` names no files and imports no code: its data is a
stored dataset or inline items, its target a config dict of a kind that needs neither
(``model``, ``scorer``, ``stored-output``). A request that comes over the network must not
choose which file the server reads or which module it imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.runner.hooks import RunHooks
from assay.runner.options import RunOptions
from assay.runner.result import RunResult
from assay.store import Store

SAFE_TARGET_TYPES = ("model", "scorer", "stored-output")
MAX_INLINE_ITEMS = 10_000


class RunRequest(BaseModel):
    """What to run: exactly one of ``dataset`` (stored, optionally pinned at ``version``)
    and ``data`` (inline items, stored with the run); scorers as ``ScorerConfig`` dicts or
    type ids; a target config (none: score the items' stored outputs)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = Field(default=None, min_length=1, max_length=255)
    version: int | None = Field(default=None, ge=0)
    data: list[dict[str, Any]] | None = Field(
        default=None, min_length=1, max_length=MAX_INLINE_ITEMS
    )
    target: dict[str, Any] | None = None
    scorers: list[str | dict[str, Any]] = Field(min_length=1, max_length=50)
    concurrency: int = Field(default=8, ge=1, le=256)
    repeats: int = Field(default=1, ge=1, le=100)
    name: str | None = Field(default=None, max_length=255)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _one_source(self) -> RunRequest:
        if (self.dataset is None) == (self.data is None):
            raise ValueError("give exactly one of 'dataset' (a stored dataset) and 'data' (items)")
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        if self.target is not None:
            kind = self.target.get("type")
            if kind not in SAFE_TARGET_TYPES:
                raise ValueError(
                    f"target type {kind!r} is not allowed here (allowed: "
                    f"{', '.join(SAFE_TARGET_TYPES)}); targets that import code run from the CLI"
                )
            if "output_fn" in self.target:
                raise ValueError("target 'output_fn' imports code and is not allowed here")
        return self


async def start_run_async(
    request: RunRequest, *, store: Store, hooks: RunHooks | None = None
) -> RunResult:
    """Execute ``request`` against ``store`` (every result stored); ``hooks`` see the run
    start (its id) and each item complete."""
    from assay.operations.stored_runs import run_dataset_async, run_stored_async

    options = RunOptions(
        concurrency=request.concurrency,
        repeats=request.repeats,
        threshold=request.threshold,
        name=request.name,
        hooks=hooks,
        progress=False,
    )
    target: Mapping[str, Any] | None = request.target
    if request.dataset is not None:
        return await run_dataset_async(
            request.dataset,
            target,
            request.scorers,
            version=request.version,
            store=store,
            options=options,
        )
    assert request.data is not None
    return await run_stored_async(
        request.data, target, request.scorers, store=store, options=options
    )


class RunNotStartedError(ValueError):
    """The run could not start (bad data, target or scorer config); nothing ran."""


def check_run_request(request: RunRequest) -> None:
    """Check the scorers before anything is stored: an unknown type raises
    ``UnknownScorerError`` ("did you mean"), bad params ``FieldErrors`` naming
    ``scorers[i].params.<name>`` (the same paths as the scorer preview)."""
    from assay.operations.scorer_preview import FieldErrors, FieldProblem, param_problems
    from assay.scoring.registry import get_scorer_type

    problems: list[FieldProblem] = []
    for index, spec in enumerate(request.scorers):
        type_id = spec if isinstance(spec, str) else spec.get("type")
        if not isinstance(type_id, str):
            problems.append(FieldProblem(loc=["scorers", index, "type"], msg="missing scorer type"))
            continue
        scorer_type = get_scorer_type(type_id)
        params = {} if isinstance(spec, str) else spec.get("params") or {}
        if not isinstance(params, Mapping):
            problems.append(
                FieldProblem(loc=["scorers", index, "params"], msg="params must be an object")
            )
            continue
        problems += param_problems(scorer_type, params, ["scorers", index, "params"])
    if problems:
        raise FieldErrors(problems)
