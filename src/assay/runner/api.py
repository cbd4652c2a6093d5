"""``run_evals``: run data through a target and scorers, in memory.

The async function is the real one; ``run_evals`` is its ``run_sync`` wrapper for scripts.
Stored runs (``run_dataset``, resume) live in ``assay.operations.stored_runs``, above the
store; they plan and execute through the same ``plan_run``/``execute_run`` with the same
``RunOptions``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.runner.engine import RunOutcome, RunPlan, UnitDispatch, execute
from assay.runner.options import RunOptions, validate_counts
from assay.runner.result import RunResult
from assay.runner.scorer_set import build_scorers, scorer_spec
from assay.runner.sink import MemorySink, ResultSink
from assay.scoring.sync import run_sync
from assay.targets.identity import fingerprinted_spec
from assay.targets.resolve import resolve_target
from assay.types import Item, ItemResult, RunInfo

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
    """The ``RunOptions`` rules for settings changed on resume."""
    validate_counts(concurrency, repeats, timeout_s)


def plan_run(
    items: Callable[[], Iterable[Item]],
    target: Any,
    scorers: Sequence[Any] | None,
    options: RunOptions,
    *,
    total_items: int | None,
    **where: Any,
) -> RunPlan:
    """Build target and scorers and describe the run (``where``: its dataset or data source
    fields of ``RunInfo``). With ``options`` validated already, everything that can be wrong
    with a run's configuration fails here, before anything runs or is stored."""
    resolved = resolve_target(target)
    built = build_scorers(scorers)
    info = RunInfo(
        id=uuid.uuid4().hex,
        name=options.name,
        target=fingerprinted_spec(resolved),
        scorers=[scorer_spec(s) for s in built],
        concurrency=options.concurrency,
        repeats=options.repeats,
        threshold=options.threshold,
        total_items=total_items,
        metadata=dict(options.metadata),
        tags=list(options.tags),
        created_at=time.time(),
        timeout_s=options.timeout_s,
        **where,
    )
    return RunPlan(info=info, items=items, target=resolved, scorers=built)


async def execute_run(
    plan: RunPlan, sink: ResultSink, options: RunOptions, dispatch: UnitDispatch | None = None
) -> RunOutcome:
    """Execute ``plan`` into ``sink`` (and the options' own sink) with the options' hooks
    and progress bar: the one path every run entry point takes (``dispatch``: the units
    run elsewhere, the Ray backend's driver)."""
    return await execute(
        plan,
        _Tee(sink, options.sink) if options.sink is not None else sink,
        hooks=options.run_hooks,
        progress=options.progress,
        gc_freeze=options.gc_freeze,
        dispatch=dispatch,
    )


async def run_evals_async(
    data: DataSource,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    *,
    options: RunOptions | None = None,
    **option_values: Any,
) -> RunResult:
    """Run every item of ``data`` through ``target`` (``None``: score stored outputs) and
    ``scorers``, in memory. Returns the results and a per-scorer summary; target and scorer
    failures are recorded per item, never raised.

    Settings come from ``options`` (a ``RunOptions``) and/or keywords of the same names,
    which win: ``concurrency`` (items at once), ``repeats``, ``threshold``, ``timeout_s``
    (per item, for the target call and each scorer call), ``name``, ``metadata``, ``hooks``,
    ``on_item_complete``, ``progress``, ``sink``.
    """
    run_options = RunOptions.of(options, **option_values)
    if run_options.backend != "local":
        raise ValueError(
            f"backend {run_options.backend!r} needs a stored run (its workers store the "
            "results): use run_stored, run_dataset or `assay run` with the store"
        )
    items, source = load_data(data)
    plan = plan_run(
        lambda: items, target, scorers, run_options, total_items=len(items), data_source=source
    )
    memory = MemorySink()
    outcome = await execute_run(plan, memory, run_options)
    return RunResult.finished(plan.info, outcome.status, outcome.summary, memory.ordered())


def run_evals(
    data: DataSource,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    *,
    options: RunOptions | None = None,
    **option_values: Any,
) -> RunResult:
    """``run_evals_async`` for synchronous code (never nests event loops)."""
    return run_sync(
        lambda: run_evals_async(data, target, scorers, options=options, **option_values)
    )


class _Tee:
    """Writes to the in-memory sink and to a caller's sink."""

    def __init__(self, *sinks: ResultSink) -> None:
        self.sinks = sinks
        self.keeps_results = any(getattr(s, "keeps_results", False) for s in sinks)
        # the first sink's summary source (a stored run's) serves the tee too
        source = getattr(sinks[0], "summary_source", None) if sinks else None
        if source is not None:
            self.summary_source = source

    async def start(self, info: RunInfo, *, resumed: bool) -> None:
        for sink in self.sinks:
            await sink.start(info, resumed=resumed)

    async def write(self, result: ItemResult) -> None:
        for sink in self.sinks:
            await sink.write(result)

    async def finish(self, run_id: str, status: Any, summary: Any) -> None:
        for sink in self.sinks:
            await sink.finish(run_id, status, summary)
