"""Stored runs: run a stored dataset (or inline data) with every result in the database,
and finish an interrupted run where it stopped.

An operation: it sits above the runner and the store (the runner only knows the
``ResultSink`` protocol) and plans and executes through the runner's ``plan_run`` and
``execute_run`` with the same ``RunOptions`` as ``run_evals``. A stored run keeps nothing
per item in memory: items are read back from the store in chunks, results stream to the
database through ``StoreSink``, and the summary streams the committed rows back at the end
(``StoreSink.summary_source``), the same numbers an in-memory run of those results gives.

Resume is exact: the (item, repeat) pairs already stored are skipped, an item's result and
scores were written in one transaction so none is half there, and the unique key on
(run, item, repeat) makes a double write impossible.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.datasets.load import load_items
from assay.operations.item_selection import ItemSelection, select_items
from assay.runner.api import DataSource, execute_run, plan_run, validate_settings
from assay.runner.engine import RunPlan
from assay.runner.hooks import RunHooks
from assay.runner.options import Backend, RunOptions
from assay.runner.result import RunResult
from assay.runner.scorer_set import build_scorers, scorer_spec, scorers_from_specs
from assay.scoring.sync import run_sync
from assay.store import Store, StoreSink, using_store
from assay.targets.identity import fingerprinted_spec
from assay.targets.resolve import resolve_target, target_from_spec
from assay.types import Item, RunInfo, ScorerSpec, TargetSpec

if TYPE_CHECKING:
    from assay.analysis.compare import RunComparison
    from assay.operations.ray_backend import RayDispatch


log = logging.getLogger(__name__)


class ResumeError(ValueError):
    """The run cannot be resumed as asked (finished, or its target/scorers changed)."""


def prepare_backend(store: Store, plan: RunPlan, options: RunOptions) -> RayDispatch | None:
    """The Ray backend's dispatch, checked (and the backend recorded on ``plan.info``)
    before the run is stored; ``None`` for a local run. Public because every stored-run
    path (tasks, calibration, optimization batches) goes through it and ``execute_stored``
    rather than a copy of the Ray plumbing."""
    if options.backend != "ray":
        return None
    from assay.operations.ray_backend import prepare

    return prepare(store, plan, options)


def check_backend(store: Store, options: RunOptions) -> None:
    """For an operation that stores something before its first run (an optimization):
    Ray installed and reachable, and ``store`` one its workers can open, checked up front
    (``RayBackendError``, one line). ``prepare_backend`` checks again per run, cheaply:
    joining Ray is done once per process."""
    if options.backend != "ray":
        return
    from assay.operations.ray_backend import check_store, connect

    check_store(store, connect(options.ray_address, options.workers), options.ray_address)


async def execute_stored(
    store: Store, plan: RunPlan, options: RunOptions, dispatch: RayDispatch | None = None
) -> RunResult:
    """Execute a stored run (already created in ``store``) locally or, with ``dispatch``
    from ``prepare_backend``, on Ray workers; the summary is read from the stored rows."""
    if dispatch is None and plan.resumed:
        # units a scaled-out session left: resumed here, they are no one's to store
        store.work_units.clear(plan.info.id)
    outcome = await execute_run(plan, StoreSink(store), options, dispatch)
    if dispatch is not None and outcome.status == "completed":
        store.work_units.clear(plan.info.id)
    return RunResult.finished(plan.info, outcome.status, outcome.summary)


async def run_dataset_async(
    dataset: str,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    *,
    version: int | None = None,
    store: Store | None = None,
    options: RunOptions | None = None,
    selection: ItemSelection | None = None,
    **option_values: Any,
) -> RunResult:
    """Run a stored dataset (pinned at ``version``, default: its current one) and store
    every result. ``RunResult.results`` is empty: read them with ``store.runs.results``.
    Settings: ``options`` and/or ``RunOptions`` keywords (see ``run_evals``); ``selection``
    runs a subset (``--limit``/``--sample``/``--ids``), recorded in the run's metadata."""
    run_options = _with_selection(RunOptions.of(options, **option_values), selection)
    with using_store(store) as db:
        found = db.datasets.get(dataset)
        pinned = found.version if version is None else version
        total = db.datasets.count_items(found.id, pinned)
        if total == 0:
            raise ValueError(f"dataset {found.name!r} has no items at version {pinned}")
        datasets = db.datasets

        chosen: set[str] | None = None
        if selection is not None and not selection.selects_all:
            chosen = {i.id for i in select_items(datasets.items(found.id, pinned), selection)}
            total = len(chosen)

        def items() -> Iterable[Item]:
            rows = datasets.items(found.id, pinned)
            return rows if chosen is None else (i for i in rows if i.id in chosen)

        plan = plan_run(
            items,
            target,
            scorers,
            run_options,
            total_items=total,
            dataset_id=found.id,
            dataset_name=found.name,
            dataset_version=pinned,
        )
        dispatch = prepare_backend(db, plan, run_options)
        db.runs.create(plan.info)
        return await execute_stored(db, plan, run_options, dispatch)


async def run_stored_async(
    data: DataSource,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    *,
    store: Store | None = None,
    options: RunOptions | None = None,
    selection: ItemSelection | None = None,
    **option_values: Any,
) -> RunResult:
    """Like ``run_evals`` but stored: the inline items are saved with the run (so it can be
    resumed) and every result goes to the database. Settings: ``options`` and/or
    ``RunOptions`` keywords (see ``run_evals``); ``selection``: a subset of the items."""
    run_options = _with_selection(RunOptions.of(options, **option_values), selection)
    source = str(data) if isinstance(data, str | Path) else None
    with using_store(store) as db:
        runs = db.runs
        # nothing per item stays in memory: the items are validated as they stream into the
        # run's row (one transaction: a bad row stores nothing) and the run reads them back
        plan = plan_run(
            lambda: runs.inline_items(plan.info.id),
            target,
            scorers,
            run_options,
            total_items=None,
            data_source=source,
        )
        dispatch = prepare_backend(db, plan, run_options)
        loaded = load_items(data, unique_ids=False)
        if selection is not None:
            loaded = select_items(loaded, selection)
        record = runs.create(plan.info, _non_empty(loaded, source))
        plan.info = plan.info.model_copy(update={"total_items": record.info.total_items})
        return await execute_stored(db, plan, run_options, dispatch)


def _with_selection(options: RunOptions, selection: ItemSelection | None) -> RunOptions:
    """``options`` with the subset recorded in the run's metadata (``selection``)."""
    if selection is None or selection.selects_all:
        return options
    return RunOptions.of(options, metadata={**options.metadata, "selection": selection.metadata()})


def _non_empty(items: Iterator[Item], source: str | None) -> Iterator[Item]:
    """``items``, or a ``ValueError`` before anything is stored when there are none."""
    first = next(items, None)
    if first is None:
        raise ValueError(f"no items in {source or 'data'}")
    return itertools.chain((first,), items)


async def resume_run_async(
    run_id: str,
    *,
    target: Any = None,
    scorers: Sequence[Any] | None = None,
    store: Store | None = None,
    concurrency: int | None = None,
    hooks: RunHooks | None = None,
    progress: bool | None = None,
    allow_changed: bool = False,
    timeout_s: float | None = None,
    backend: Backend | None = None,
    ray_address: str | None = None,
    workers: int | None = None,
) -> RunResult:
    """Finish an interrupted (or killed) run: only the missing (item, repeat) results run.

    The target and scorers are re-created from the run's record unless given (a run whose
    target or scorers were Python objects needs them passed again). A scorer whose
    fingerprint changed since the run started (a prompt, a code step, a param, the judge
    model), or a target whose code or config changed, is refused with a ``ResumeError`` that
    names each change: mixing two versions' answers in one run would make its summary
    meaningless. ``allow_changed=True`` resumes anyway (logged as a warning).

    ``backend`` (default: the one the run started on), ``ray_address`` and ``workers``:
    where the rest runs; a run started on Ray can finish locally and the other way round.
    """
    with using_store(store) as db:
        record = db.runs.get(run_id)
        info = record.info
        if record.status == "completed":
            raise ResumeError(f"run {info.id} is already completed")
        _require_dataset(db, info)
        resolved = resolve_target(target) if target is not None else target_from_spec(info.target)
        built = build_scorers(scorers) if scorers is not None else scorers_from_specs(info.scorers)
        changes = changes_since_start(
            info.scorers, [scorer_spec(s) for s in built], info.target, fingerprinted_spec(resolved)
        )
        if changes and not allow_changed:
            raise ResumeError(
                f"run {info.id[:8]} cannot be resumed: changed since it started: "
                + "; ".join(changes)
                + ". Resuming would mix answers of the old and the new version in one run; "
                "start a new run, or pass --allow-changed (allow_changed=True) to resume anyway"
            )
        if changes:
            log.warning("resuming run %s despite changes: %s", info.id, "; ".join(changes))
        if concurrency is not None:
            validate_settings(concurrency, info.repeats)
            info = info.model_copy(update={"concurrency": concurrency})
        if timeout_s is not None:
            validate_settings(info.concurrency, info.repeats, timeout_s)
            info = info.model_copy(update={"timeout_s": timeout_s})
        runs, datasets = db.runs, db.datasets
        if info.dataset_id is not None:
            dataset_id, pinned = info.dataset_id, info.dataset_version

            def items() -> Iterable[Item]:
                return datasets.items(dataset_id, pinned)
        else:

            def items() -> Iterable[Item]:
                return runs.inline_items(info.id)

        plan = RunPlan(
            info=info,
            items=items,
            target=resolved,
            scorers=built,
            done=lambda: runs.completed_units(info.id),
            already=runs.completed_count(info.id),
            previous=lambda: runs.results(info.id),
            resumed=True,
        )
        # the run's own settings, with the caller's hooks and progress bar
        chosen = backend or info.backend
        options = RunOptions(
            concurrency=info.concurrency,
            repeats=info.repeats,
            timeout_s=info.timeout_s,
            hooks=hooks,
            progress=progress,
            backend=chosen,
            ray_address=ray_address if chosen == "ray" else None,
            workers=(workers or info.workers) if chosen == "ray" else None,
        )
        dispatch = prepare_backend(db, plan, options)
        return await execute_stored(db, plan, options, dispatch)


def _require_dataset(db: Store, info: RunInfo) -> None:
    """Refuse, before the run is touched, to resume a run whose dataset was deleted (its
    ``dataset_id`` became null) or cannot be read: its remaining items are gone, so a resume
    could only fail the run half-way with a traceback."""
    if info.dataset_name is None:
        return
    gone = info.dataset_id is None
    if not gone:
        try:
            db.datasets.get(info.dataset_id or "")
        except LookupError:
            gone = True
    if gone:
        raise ResumeError(
            f"run {info.id[:8]} cannot be resumed: its dataset {info.dataset_name!r} "
            f"(version {info.dataset_version}) was deleted; start a new run on stored data"
        )


def changes_since_start(
    stored: Sequence[ScorerSpec],
    given: Sequence[ScorerSpec],
    stored_target: TargetSpec,
    given_target: TargetSpec,
) -> list[str]:
    """What differs between the scorers and target a run started with and the given ones,
    one phrase per change (``scorer 'faithfulness': analyze step``); empty when nothing did.
    """
    changes: list[str] = []
    before = {spec.id: spec for spec in stored}
    after = {spec.id: spec for spec in given}
    if set(before) != set(after):
        changes.append(f"scorers were {sorted(before)}, now {sorted(after)}")
    for key in sorted(set(before) & set(after)):
        parts = _changed_parts(before[key], after[key])
        if parts:
            changes.append(f"scorer {key!r}: {', '.join(parts)}")
    target_parts = _changed_parts(stored_target, given_target)
    if target_parts:
        changes.append(f"target {given_target.label!r}: {', '.join(target_parts)}")
    return changes


def _changed_parts(old: ScorerSpec | TargetSpec, new: ScorerSpec | TargetSpec) -> list[str]:
    if not old.fingerprint or old.fingerprint == new.fingerprint:
        return []
    if not old.fingerprint_parts:
        return ["fingerprint (recorded without parts)"]
    names = sorted(set(old.fingerprint_parts) | set(new.fingerprint_parts))
    changed = [n for n in names if old.fingerprint_parts.get(n) != new.fingerprint_parts.get(n)]
    return changed or ["fingerprint"]


def run_dataset(
    dataset: str, target: Any = None, scorers: Sequence[Any] | None = None, **options: Any
) -> RunResult:
    """``run_dataset_async`` for synchronous code."""
    return run_sync(lambda: run_dataset_async(dataset, target, scorers, **options))


def run_stored(
    data: DataSource, target: Any = None, scorers: Sequence[Any] | None = None, **options: Any
) -> RunResult:
    """``run_stored_async`` for synchronous code."""
    return run_sync(lambda: run_stored_async(data, target, scorers, **options))


def resume_run(run_id: str, **options: Any) -> RunResult:
    """``resume_run_async`` for synchronous code."""
    return run_sync(lambda: resume_run_async(run_id, **options))


def compare_stored(
    run_a: str,
    run_b: str,
    *,
    store: Store | None = None,
    threshold: float = 0.0,
) -> RunComparison:
    """Compare two stored runs (ids or unique prefixes): B against baseline A."""
    from assay.analysis.compare import compare_runs

    with using_store(store) as db:
        a, b = db.runs.get(run_a), db.runs.get(run_b)
        return compare_runs(
            a, db.runs.score_rows(a.id), b, db.runs.score_rows(b.id), threshold=threshold
        )
