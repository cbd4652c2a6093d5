"""``run_evals``: run data through a target and scorers, in memory.

The async function is the real one; ``run_evals`` is its ``run_sync`` wrapper for scripts.
Stored runs (``run_dataset``, resume) live in ``assay.stored_runs``, above the store.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.runner.engine import RunPlan, execute
from assay.runner.hooks import Hook, RunHooks
from assay.runner.result import RunResult
from assay.runner.scorer_set import build_scorers, scorer_spec
from assay.runner.sink import MemorySink, ResultSink
from assay.scoring.sync import run_sync
from assay.targets.identity import fingerprinted_spec
from assay.targets.resolve import resolve_target
from assay.types import Item, ItemResult, RunInfo, check_run_threshold

DataSource = str | Path | Iterable[Item | dict[str, Any]]


def load_data(data: DataSource) -> tuple[list[Item], str | None]:
    """Validate every item before the run starts (a bad row 7 fails now, not mid-run)."""
    from assay.datasets.load import load_items

    source = str(data) if isinstance(data, str | Path) else None
    items = list(load_items(data))
    if not items:
        raise ValueError(f"no items in {source or 'data'}")
    return items, source


def validate_settings(concurrency: int, repeats: int, timeout_s: float | None = None) -> None:
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1 (got {repeats})")
    if timeout_s is not None and not timeout_s > 0:
        raise ValueError(f"timeout_s must be a positive number of seconds (got {timeout_s})")


def plan_run(
    items: Callable[[], Iterable[Item]],
    target: Any,
    scorers: Sequence[Any] | None,
    *,
    concurrency: int,
    repeats: int,
    threshold: float | None,
    total_items: int | None,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    timeout_s: float | None = None,
    **where: Any,
) -> RunPlan:
    """Validate the settings, build target and scorers, describe the run (``where``: its
    dataset or data source fields of ``RunInfo``). Everything that can be wrong with a run's
    configuration fails here, before anything runs or is stored."""
    validate_settings(concurrency, repeats, timeout_s)
    check_run_threshold(threshold)
    resolved = resolve_target(target)
    built = build_scorers(scorers)
    info = RunInfo(
        id=uuid.uuid4().hex,
        name=name,
        target=fingerprinted_spec(resolved),
        scorers=[scorer_spec(s) for s in built],
        concurrency=concurrency,
        repeats=repeats,
        threshold=threshold,
        total_items=total_items,
        metadata=metadata or {},
        created_at=time.time(),
        timeout_s=timeout_s,
        **where,
    )
    return RunPlan(info=info, items=items, target=resolved, scorers=built)


def with_item_hook(hooks: RunHooks | None, on_item_complete: Hook | None) -> RunHooks | None:
    """``hooks`` plus the ``on_item_complete`` shortcut of the run functions."""
    if on_item_complete is None:
        return hooks
    return dataclasses.replace(hooks or RunHooks(), on_item_complete=on_item_complete)


async def run_evals_async(
    data: DataSource,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    *,
    concurrency: int = 8,
    repeats: int = 1,
    threshold: float | None = None,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    on_item_complete: Hook | None = None,
    hooks: RunHooks | None = None,
    progress: bool | None = None,
    sink: ResultSink | None = None,
    timeout_s: float | None = None,
) -> RunResult:
    """Run every item of ``data`` through ``target`` (``None``: score stored outputs) and
    ``scorers``, ``concurrency`` at a time, ``repeats`` times each. Returns the results and
    a per-scorer summary; target and scorer failures are recorded per item, never raised.
    ``timeout_s`` limits the target call and each scorer call of an item (see
    ``RunInfo.timeout_s``)."""
    validate_settings(concurrency, repeats, timeout_s)
    items, source = load_data(data)
    plan = plan_run(
        lambda: items,
        target,
        scorers,
        concurrency=concurrency,
        repeats=repeats,
        threshold=threshold,
        total_items=len(items),
        name=name,
        metadata=metadata,
        timeout_s=timeout_s,
        data_source=source,
    )
    memory = MemorySink()
    outcome = await execute(
        plan,
        _Tee(memory, sink) if sink else memory,
        hooks=with_item_hook(hooks, on_item_complete),
        progress=progress,
    )
    results = sorted(memory.results, key=_order)
    return RunResult(
        info=plan.info, status=outcome.status, summary=outcome.summary, results=results
    )


def _order(result: ItemResult) -> tuple[int, int]:
    return result.position, result.repeat


def run_evals(
    data: DataSource, target: Any = None, scorers: Sequence[Any] | None = None, **options: Any
) -> RunResult:
    """``run_evals_async`` for synchronous code (never nests event loops)."""
    return run_sync(lambda: run_evals_async(data, target, scorers, **options))


class _Tee:
    """Writes to the in-memory sink and to a caller's sink."""

    def __init__(self, *sinks: ResultSink) -> None:
        self.sinks = sinks

    async def start(self, info: RunInfo, *, resumed: bool) -> None:
        for sink in self.sinks:
            await sink.start(info, resumed=resumed)

    async def write(self, result: ItemResult) -> None:
        for sink in self.sinks:
            await sink.write(result)

    async def finish(self, run_id: str, status: Any, summary: Any) -> None:
        for sink in self.sinks:
            await sink.finish(run_id, status, summary)
