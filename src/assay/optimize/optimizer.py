"""``optimize`` and ``resume_optimization``: GEPA over assay, stored and resumable.

The flow: validate the config, the models, the scorers and the data before anything is
stored (a bad key or an unknown scorer fails now, naming it); create the stored
optimization; run ``gepa.optimize`` in a worker thread with ``AssayAdapter`` (evaluations
come back to the caller's event loop, see ``session``), GEPA's state in the optimization's
``run_dir``; check the winner on the held-out test split; store the result.

A kill at any point leaves a resumable optimization: GEPA saved its state at the start of
the last iteration, the store holds every finished evaluation, candidate and reflection.
``resume_optimization`` rebuilds the same splits (pinned dataset versions, seeded split)
and the same budget, lets GEPA load its state, and replays the choices of the iteration
that was cut short (``sampling``: draws are functions of seed and iteration).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gepa.api import optimize as gepa_optimize
from gepa.core.callbacks import GEPACallback
from gepa.core.result import GEPAResult
from pydantic import BaseModel

from assay.models.base import Model
from assay.models.resolve import shippable_model
from assay.operations.stored_runs import check_backend
from assay.optimize.adapter import AssayAdapter
from assay.optimize.config import (
    OptimizeConfig,
    OptimizeConfigError,
    OptimizeSettings,
    SearchSettings,
    make_optimize_config,
)
from assay.optimize.events import EventHandler, Finished, Started
from assay.optimize.gepa_log import FileLogger
from assay.optimize.held_out import check_held_out
from assay.optimize.outcome import Searched, announce_test, complete_with
from assay.optimize.outcome import complete as complete
from assay.optimize.results import OptimizeResult, summarize
from assay.optimize.row_scores import weighted_specs
from assay.optimize.sampling import IterationSeededSampler, IterationSeededSelector
from assay.optimize.session import Evaluator, OptimizationStopped, Progress, Session
from assay.optimize.splits import Splits, load_splits, pin_versions
from assay.optimize.task_evaluator import TaskEvaluator
from assay.optimize.watch import BudgetStopper, Watcher
from assay.runner.options import Backend, RunOptions
from assay.runner.scorer_set import build_scorers, scorer_spec
from assay.scoring.scorer import Scorer
from assay.scoring.sync import run_sync
from assay.store import Store, using_store
from assay.store.optimizations_repo import (
    CandidateRecord,
    EvaluationRecord,
    OptimizationRecord,
    OptimizationStatus,
    ReflectionRecord,
)
from assay.store.runs_repo import lease_is_live

DEFAULT_RUN_ROOT = Path(".assay") / "optimizations"


class OptimizeResumeError(ValueError):
    """The optimization cannot be resumed (finished, or its models cannot be re-created)."""


Conclude = Callable[[Session, Splits, Searched], BaseModel]
"""After the search, in GEPA's thread: check the winner on the held-out split and store the
optimization's result (``status="completed"``); returns the result."""


@dataclass
class _Prepared:
    """A checked optimization: the search settings, what evaluates a candidate, the data,
    the seed candidate and what concludes it (task prompts and judge prompts differ only
    in ``evaluator`` and ``conclude``)."""

    config: SearchSettings
    reflection_model: Model
    evaluator: Evaluator
    splits: Splits
    seed_candidate: dict[str, str]
    conclude: Conclude


def model_for(label: str, given: Model | None, base_url: str | None, key: str) -> Model:
    """``given``, else the model ``label`` names (``OptimizeConfigError`` naming ``key``)."""
    if given is not None:
        return given
    try:
        return shippable_model(label, base_url=base_url)
    except (KeyError, ValueError) as exc:
        raise OptimizeConfigError(
            f"key {key!r}: cannot use model {label!r}: {exc}. A model given as a Python "
            f"object must be passed again ({key}=...)",
            key=key,
        ) from exc


def check_settings(
    settings: OptimizeSettings,
    task_model: Model | None = None,
    reflection_model: Model | None = None,
) -> tuple[list[Scorer], Model, Model]:
    """The scorers and the two models of ``settings``, built: an ``OptimizeConfigError``
    naming the key when one cannot be (before anything is stored)."""
    try:
        scorers = build_scorers(settings.scorers)
        weighted_specs([scorer_spec(s) for s in scorers])
    except (KeyError, ValueError, TypeError) as exc:
        raise OptimizeConfigError(f"key 'scorers': {exc}", key="scorers") from exc
    task = model_for(settings.task_model, task_model, settings.task_base_url, "task_model")
    reflection = model_for(
        settings.reflection_model,
        reflection_model,
        settings.reflection_base_url,
        "reflection_model",
    )
    return scorers, task, reflection


def _prepare(
    config: OptimizeConfig,
    store: Store,
    task_model: Model | None,
    reflection_model: Model | None,
) -> _Prepared:
    """Everything that can be wrong, checked before anything is stored or run."""
    scorers, task, reflection = check_settings(config, task_model, reflection_model)
    try:
        splits = load_splits(config, store)
    except ValueError as exc:  # "train: ...": the split names the key
        split = str(exc).partition(":")[0]
        key = split if split in ("train", "val", "test") else None
        raise OptimizeConfigError(f"key {exc}", key=key) from exc
    evaluator = TaskEvaluator(config, task, scorers)
    return _Prepared(config, reflection, evaluator, splits, dict(config.candidate), _conclude_task)


def model_label(model: Model) -> str:
    """A model object's ``provider/model`` label (what the stored config records)."""
    provider = getattr(model, "provider", None)
    return f"{provider}/{model.model_id}" if provider else model.model_id


def given_model(raw: dict[str, Any], key: str, model: str | Model | None) -> Model | None:
    """Record a model given to a call in its raw config: a string under ``key`` as it is, an
    object by its label; return the object (``None`` otherwise), which the call passes on
    and a resume must be given again. Both kinds of optimization take models this way."""
    if model is None or isinstance(model, str):
        if model is not None:
            raw[key] = model
        return None
    raw[key] = model_label(model)
    return model


async def optimize_async(
    config: OptimizeConfig | dict[str, Any] | None = None,
    *,
    task_model: str | Model | None = None,
    reflection_model: str | Model | None = None,
    on_event: EventHandler | None = None,
    store: Store | None = None,
    backend: Backend = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    **fields: Any,
) -> OptimizeResult:
    """Optimize a prompt with GEPA; see ``OptimizeConfig`` for the settings (given as a
    config, a dict, or keywords). ``task_model``/``reflection_model`` may be model strings
    or ``Model`` objects (objects must be passed again to resume). ``on_event`` receives
    the progress events (``assay.optimize.events``). ``backend``/``ray_address``/
    ``workers``: what executes each evaluation run, as for ``run_stored`` (``"ray"``:
    Ray workers; docs/scale-out.md)."""
    scale_out = RunOptions(backend=backend, ray_address=ray_address, workers=workers)
    raw: dict[str, Any]
    if isinstance(config, OptimizeConfig):
        raw = config.model_dump(exclude_unset=True)
    else:
        raw = dict(config or {})
    raw.update(fields)
    task_obj = given_model(raw, "task_model", task_model)
    reflection_obj = given_model(raw, "reflection_model", reflection_model)
    checked = make_optimize_config(raw)
    start = functools.partial(
        create_optimization, checked, task_model=task_obj, reflection_model=reflection_obj
    )
    return _task_result(await start_and_run(start, store, on_event, scale_out))


def _task_result(result: BaseModel) -> OptimizeResult:
    if not isinstance(result, OptimizeResult):
        raise OptimizeResumeError("this optimization is not a task-prompt optimization")
    return result


@dataclass
class StartedOptimization:
    """A stored optimization, checked and ready to execute: ``run`` executes it.

    Why two steps: a caller that answers before the work is done (the HTTP server) needs the
    id, and every error of the config, as soon as the optimization is stored, and only then
    starts the long part in the background."""

    id: str
    run_dir: str
    store: Store
    prepared: _Prepared
    progress: Progress
    resumed: bool

    async def run(
        self, on_event: EventHandler | None = None, backend: RunOptions | None = None
    ) -> BaseModel:
        """Execute it (GEPA, then the held-out check). Cancelling the awaiting task stops
        GEPA's thread at its next step and leaves the optimization ``interrupted``.
        ``backend``: what executes each evaluation run (its ``backend``, ``ray_address``,
        ``workers``; default: this process)."""
        return await _execute(
            self.prepared,
            self.id,
            self.run_dir,
            self.store,
            self.progress,
            self.resumed,
            on_event,
            backend,
        )


def create_optimization(
    config: OptimizeConfig,
    store: Store,
    *,
    task_model: Model | None = None,
    reflection_model: Model | None = None,
    optimization_id: str | None = None,
) -> StartedOptimization:
    """Check ``config`` (models, scorers, data: ``OptimizeConfigError`` naming the key) and
    store the optimization; nothing runs yet (``StartedOptimization.run``). Stored datasets
    are pinned to their current version in the stored config."""
    config = pin_versions(config, store)
    prepared = _prepare(config, store, task_model, reflection_model)
    stored = config.model_dump(mode="json", exclude_none=True)
    return store_optimization(prepared, stored, config.run_dir, store, optimization_id)


def store_optimization(
    prepared: _Prepared,
    stored_config: dict[str, Any],
    run_dir_given: str | None,
    store: Store,
    optimization_id: str | None = None,
) -> StartedOptimization:
    """Store a checked optimization (``stored_config`` is what a resume rebuilds it from);
    nothing runs yet."""
    optimization_id = optimization_id or uuid.uuid4().hex
    run_dir = Path(run_dir_given) if run_dir_given else DEFAULT_RUN_ROOT / optimization_id
    if (run_dir / "gepa_state.bin").exists():
        raise OptimizeConfigError(
            f"key 'run_dir': {run_dir} already holds the GEPA state of another "
            "optimization; resume that one (assay optimize resume ID) or give an empty folder",
            key="run_dir",
        )
    resolved = str(run_dir.resolve())
    store.optimizations.create(
        optimization_id,
        name=prepared.config.name,
        config=stored_config,
        run_dir=resolved,
    )
    return StartedOptimization(optimization_id, resolved, store, prepared, Progress(), False)


def prepare_resume(
    ref: str,
    store: Store,
    *,
    task_model: Model | None = None,
    reflection_model: Model | None = None,
) -> StartedOptimization:
    """Check that optimization ``ref`` can be resumed and mark it running again
    (``OptimizeResumeError`` otherwise); ``run`` continues it."""
    record = store.optimizations.get(ref)
    if record.status == "completed":
        raise OptimizeResumeError(f"optimization {record.id} is already completed")
    owner = record.progress.get("lease_owner")
    if record.status == "running" and lease_is_live(owner, record.progress.get("lease_expires_at")):
        raise OptimizeResumeError(
            f"optimization {record.id} is running in process {owner}; wait for it to "
            "finish or stop that process first"
        )
    prepared = _prepare_stored(record, store, task_model, reflection_model)
    progress = Progress.model_validate(record.progress)
    store.optimizations.update(record.id, status="running")
    return StartedOptimization(record.id, record.run_dir, store, prepared, progress, True)


async def resume_optimization_async(
    ref: str,
    *,
    task_model: Model | None = None,
    reflection_model: Model | None = None,
    on_event: EventHandler | None = None,
    store: Store | None = None,
    backend: Backend = "local",
    ray_address: str | None = None,
    workers: int | None = None,
) -> OptimizeResult:
    """Continue a killed, failed or interrupted optimization (id or unique prefix);
    ``backend``/``ray_address``/``workers`` as for ``optimize_async``."""
    scale_out = RunOptions(backend=backend, ray_address=ray_address, workers=workers)
    resumed = await resume_stored(ref, task_model, reflection_model, on_event, store, scale_out)
    return _task_result(resumed)


async def resume_stored(
    ref: str,
    task_model: Model | None,
    reflection_model: Model | None,
    on_event: EventHandler | None,
    store: Store | None,
    scale_out: RunOptions,
) -> BaseModel:
    """Resume optimization ``ref`` whatever its kind (its stored config says how it is
    prepared, see ``PREPARERS``), its batches on ``scale_out``'s backend; the caller checks
    that the result is the kind it expects."""
    start = functools.partial(
        prepare_resume, ref, task_model=task_model, reflection_model=reflection_model
    )
    return await start_and_run(start, store, on_event, scale_out)


async def start_and_run(
    start: Callable[[Store], StartedOptimization],
    store: Store | None,
    on_event: EventHandler | None,
    scale_out: RunOptions,
) -> BaseModel:
    """``start`` an optimization in ``store`` (store a new one, or mark a stored one running
    again) and run it, its batches on ``scale_out``'s backend. Every kind of optimization
    begins this way; the backend is checked first, so a missing Ray is reported before
    anything is stored."""
    with using_store(store) as db:
        check_backend(db, scale_out)
        started = start(db)
        return await started.run(on_event, scale_out)


PREPARERS: dict[
    str, Callable[[OptimizationRecord, Store, Model | None, Model | None], _Prepared]
] = {}
"""How an optimization of another kind is prepared from its stored record, by the
``optimizes`` key of its stored config (``judge``: ``optimize.judge``, registered when that
module is imported), given the record, the store, the model under evaluation (the task
model; a judge optimization's judge model) and the reflection model. A stored config
without it is a task-prompt optimization."""


def _prepare_stored(
    record: OptimizationRecord,
    store: Store,
    task_model: Model | None,
    reflection_model: Model | None,
) -> _Prepared:
    kind = record.config.get("optimizes")
    if kind is not None:
        if kind == "judge" and kind not in PREPARERS:
            import assay.optimize.judge  # noqa: F401  (registers its preparer)
        if kind not in PREPARERS:
            raise OptimizeResumeError(f"optimization {record.id} has unknown kind {kind!r}")
        return PREPARERS[kind](record, store, task_model, reflection_model)
    config = make_optimize_config(record.config, source=f"optimization {record.id}")
    return _prepare(config, store, task_model, reflection_model)


STOP_FILE = "gepa.stop"
"""GEPA stops at its next iteration when this file appears in ``run_dir`` (its
``FileStopper``, added whenever a run_dir is given)."""


def _stop_file_reason(stop_file: Path) -> str | None:
    """The stop reason when GEPA's stop file, not a budget, ended the search."""
    if not stop_file.exists():
        return None
    return f"stopped by request: {stop_file} was created (removed when the search is resumed)"


async def _execute(
    prepared: _Prepared,
    optimization_id: str,
    run_dir: str,
    store: Store,
    progress: Progress,
    resumed: bool,
    on_event: EventHandler | None,
    backend: RunOptions | None = None,
) -> BaseModel:
    config = prepared.config
    session = Session(
        optimization_id=optimization_id,
        config=config,
        store=store,
        reflection_model=prepared.reflection_model,
        evaluator=prepared.evaluator,
        loop=asyncio.get_running_loop(),
        progress=progress,
        on_event=on_event,
        backend=backend,
    )
    session.save_progress()  # takes the lease before anything runs
    known = {c.idx: c.components for c in store.optimizations.candidates(optimization_id)}
    # GEPA's own thread (not the default executor: an optimization holds it for its whole
    # life, and the steps it waits for use ``asyncio.to_thread`` themselves)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"gepa-{optimization_id[:8]}")
    context = contextvars.copy_context()
    worker = asyncio.get_running_loop().run_in_executor(
        pool, context.run, _run_blocking, session, prepared, run_dir, known, resumed
    )
    try:
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            # stop GEPA's thread and wait for it: nothing may write after the optimization
            # is stored as interrupted (the steps in flight are cancelled, see Session.run)
            session.request_stop()
            with contextlib.suppress(BaseException):
                await worker
            raise
    except BaseException as exc:
        session.request_stop()
        session.release()
        stopped = not isinstance(exc, Exception) or isinstance(exc, OptimizationStopped)
        status: OptimizationStatus = "interrupted" if stopped else "failed"
        store.optimizations.update(
            optimization_id,
            status=status,
            progress=session.progress.model_dump() | {"elapsed_s": session.elapsed_s},
            error=f"{type(exc).__name__}: {exc}",
        )
        raise
    finally:
        pool.shutdown(wait=False)


def _run_blocking(
    session: Session,
    prepared: _Prepared,
    run_dir: str,
    known: dict[int, dict[str, str]],
    resumed: bool,
) -> BaseModel:
    """GEPA's run, then the held-out check and the stored result, in GEPA's (worker)
    thread."""
    splits = prepared.splits
    searched = _search(session, prepared, run_dir, known, resumed)
    return prepared.conclude(session, splits, searched)


def _search(
    session: Session,
    prepared: _Prepared,
    run_dir: str,
    known: dict[int, dict[str, str]],
    resumed: bool,
) -> Searched:
    config = session.config
    splits = prepared.splits
    budget = config.budget
    session.emit(
        Started(
            optimization_id=session.id,
            resumed=resumed,
            train_size=len(splits.train),
            val_size=len(splits.val),
            test_size=len(splits.test),
            max_metric_calls=budget.max_metric_calls,
            max_iterations=budget.max_iterations,
            max_cost_usd=budget.max_cost_usd,
            max_wall_time_s=budget.max_wall_time_s,
        )
    )
    watcher = Watcher(session, known)
    stopper = BudgetStopper(session, budget, watcher)
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    stop_file = Path(run_dir) / STOP_FILE
    if resumed and stop_file.exists():  # the stop it asked for happened; a resume continues
        stop_file.unlink()
    callbacks: list[GEPACallback] = [watcher]  # type: ignore[list-item]
    result: GEPAResult[Any, Any] = gepa_optimize(
        seed_candidate=dict(prepared.seed_candidate),
        trainset=splits.train,
        valset=splits.val,
        adapter=AssayAdapter(session),
        candidate_selection_strategy=IterationSeededSelector(
            config.candidate_selection, config.seed
        ),
        frontier_type=config.frontier,
        skip_perfect_score=config.skip_perfect_score,
        batch_sampler=IterationSeededSampler(config.minibatch_size, config.seed),
        module_selector=config.module_selector,
        stop_callbacks=[stopper],
        run_dir=run_dir,
        logger=FileLogger(Path(run_dir) / "gepa.log"),
        callbacks=callbacks,
        seed=config.seed,
        raise_on_exception=True,
        display_progress_bar=False,
    )
    if session.failure is not None:
        raise session.failure
    if watcher.error is not None:
        raise watcher.error
    if session.stop_requested:
        raise OptimizationStopped("optimization stopped")
    best_idx = int(result.best_idx)
    chosen = result.best_candidate
    assert isinstance(chosen, dict)
    best = {str(k): str(v) for k, v in chosen.items()}
    progress = session.progress
    progress.best_idx = best_idx
    progress.best_val_score = float(result.val_aggregate_scores[best_idx])
    progress.seed_val_score = float(result.val_aggregate_scores[0])
    progress.metric_calls = int(result.total_metric_calls or progress.metric_calls)
    session.emit(
        Finished(
            optimization_id=session.id,
            status="searched",
            best_idx=best_idx,
            best_val_score=progress.best_val_score,
            seed_val_score=progress.seed_val_score,
            metric_calls=progress.metric_calls,
            iterations=progress.iterations,
            cost_usd=progress.cost_usd,
        )
    )
    return Searched(
        best_idx=best_idx,
        best=best,
        seed=dict(prepared.seed_candidate),
        candidates=len(result.candidates),
        stop_reason=stopper.reason or _stop_file_reason(stop_file),
    )


def _conclude_task(session: Session, splits: Splits, searched: Searched) -> OptimizeResult:
    """Seed vs best on the test split (per-item scores, paired bootstrap), then the result."""
    test = session.run(check_held_out(session, splits.test, searched.seed, searched.best))
    if test is not None:
        announce_test(session, test)
    return complete_with(OptimizeResult, session, searched, test, summarize)


def optimize(
    config: OptimizeConfig | dict[str, Any] | None = None, **kwargs: Any
) -> OptimizeResult:
    """``optimize_async`` for synchronous code."""
    return run_sync(lambda: optimize_async(config, **kwargs))


def resume_optimization(ref: str, **kwargs: Any) -> OptimizeResult:
    """``resume_optimization_async`` for synchronous code."""
    return run_sync(lambda: resume_optimization_async(ref, **kwargs))


class OptimizationView(BaseModel):
    """Everything stored about one optimization (``assay optimize show``)."""

    optimization: OptimizationRecord
    candidates: list[CandidateRecord]
    evaluations: list[EvaluationRecord]
    reflections: list[ReflectionRecord]


def show_optimization(ref: str, *, store: Store | None = None) -> OptimizationView:
    """The stored optimization ``ref`` (id or unique prefix) with its candidates,
    evaluations (each a stored run) and reflections."""
    with using_store(store) as db:
        record = db.optimizations.get(ref)
        repo = db.optimizations
        return OptimizationView(
            optimization=record,
            candidates=repo.candidates(record.id),
            evaluations=repo.evaluations(record.id),
            reflections=repo.reflections(record.id),
        )
