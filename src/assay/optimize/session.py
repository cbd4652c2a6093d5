"""One optimization in progress: evaluations as stored runs, reflections, cost, progress.

GEPA is synchronous and calls the adapter from its own thread; assay's runner is async. The
session owns that bridge: GEPA's thread submits coroutines to the caller's event loop
(``run``) and waits for them, so a batch is executed by the runner's concurrent engine
(concurrency, cache, retries, rate limits) and never item by item, and HTTP clients, the
model cache and the store stay bound to one loop for the whole optimization.

Everything GEPA does is written down as it happens: each (candidate, split) evaluation is
a normal stored run plus an ``optimization_evaluations`` row, each reflection call a row
with its prompt and answer, and the progress (metric calls, cost, elapsed time, best
validation score) after every step. A killed optimization therefore loses at most the step
in flight, and a resume reads completed validation evaluations back instead of paying for
them again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from assay.models.base import ChatMessage, Model
from assay.optimize.candidate_target import candidate_hash
from assay.optimize.config import SearchSettings
from assay.optimize.events import Evaluated, EventHandler, OptimizeEvent
from assay.optimize.row_scores import RowScore
from assay.optimize.splits import Example
from assay.runner.api import execute_run, plan_run
from assay.runner.engine import RunPlan
from assay.runner.options import RunOptions
from assay.runner.sink import MemorySink
from assay.scoring.scorer import Scorer
from assay.store import Store, StoreSink
from assay.store.runs_repo import new_lease_owner
from assay.targets.base import Target
from assay.types import Item, ItemResult

T = TypeVar("T")

LEASE_S = 600.0
"""How long an optimization's lease lasts without renewal. It is renewed at every stored
step (an evaluation can take minutes); on the same host a dead owner is recognised at once,
so a killed optimization can be resumed immediately."""


class OptimizationStopped(RuntimeError):
    """The optimization was asked to stop (cancelled, Ctrl-C) while GEPA was running."""


class Progress(BaseModel):
    """What an optimization has spent and found so far (stored after every step)."""

    metric_calls: int = 0
    iterations: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    best_idx: int = 0
    best_val_score: float | None = None
    seed_val_score: float | None = None
    test_metric_calls: int = 0
    lease_owner: str | None = None
    """``host:pid:token`` of the process working on the optimization (``None``: nobody)."""
    lease_expires_at: float | None = None
    """Until when the lease holds without renewal (renewed at every stored step)."""


class Evaluator(Protocol):
    """What a candidate is run on and how its rows are scored: the one part that differs
    between optimizing a task prompt (``task_evaluator``) and a judge's prompt
    (``judge_evaluator``). Everything else (GEPA, budgets, the store, resume) is shared."""

    async def run(
        self, session: Session, items: list[Item], candidate: dict[str, str], split: str
    ) -> tuple[str, list[ItemResult], float]:
        """Run ``candidate`` on ``items`` as one stored run: (run id, results, cost)."""
        ...

    def rows(self, results: Mapping[str, ItemResult], examples: list[Example]) -> list[RowScore]:
        """The rows of ``examples`` (aligned with it) from each item's result."""
        ...


@dataclass
class Evaluation:
    """A batch evaluated: rows aligned with the batch, and the stored run it is."""

    rows: list[RowScore]
    run_id: str | None
    mean_score: float
    event: Evaluated
    """To emit from GEPA's thread (``Session.emit``), where every event is emitted."""


class Session:
    """The shared state of one optimization (see the module docstring)."""

    def __init__(
        self,
        *,
        optimization_id: str,
        config: SearchSettings,
        store: Store,
        reflection_model: Model,
        evaluator: Evaluator,
        loop: asyncio.AbstractEventLoop,
        progress: Progress,
        on_event: EventHandler | None,
        backend: RunOptions | None = None,
    ) -> None:
        self.id = optimization_id
        self.backend = backend or RunOptions()
        """What executes each evaluation run: its ``backend``, ``ray_address`` and
        ``workers`` (the other run settings come from the config)."""
        self.config = config
        self.store = store
        self.reflection_model = reflection_model
        self.evaluator = evaluator
        self.loop = loop
        self.progress = progress
        self.on_event = on_event
        self.iteration = 0
        self.stop_requested = False
        self.failure: BaseException | None = None
        """The first failure to store something. GEPA swallows exceptions raised while it
        reflects; this one must not vanish: the stop condition ends the optimization on it
        and the optimizer raises it."""
        self._lock = threading.Lock()
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        progress.lease_owner = new_lease_owner()
        self._elapsed_before = progress.elapsed_s
        self._started = time.monotonic()

    # ------------------------------------------------------------------ bookkeeping
    @property
    def elapsed_s(self) -> float:
        return self._elapsed_before + (time.monotonic() - self._started)

    def emit(self, event: OptimizeEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def save_progress(self) -> None:
        self.progress.elapsed_s = self.elapsed_s
        if self.progress.lease_owner is not None:
            self.progress.lease_expires_at = time.time() + LEASE_S
        self.store.optimizations.update(self.id, progress=self.progress.model_dump())

    def release(self) -> None:
        """Give up the lease (the optimization ended, or failed and may be resumed)."""
        self.progress.lease_owner = None
        self.progress.lease_expires_at = None

    def run(self, factory: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the session's loop from GEPA's thread and wait for it. A
        step cancelled by ``request_stop`` raises ``OptimizationStopped`` here."""
        if self.failure is not None:
            factory.close()
            raise self.failure
        if self.stop_requested:
            factory.close()
            raise OptimizationStopped("optimization stopped")
        future = asyncio.run_coroutine_threadsafe(factory, self.loop)
        with self._lock:
            self._in_flight.add(future)
        try:
            if self.stop_requested:  # asked between the check above and the add
                future.cancel()
            return future.result()
        except concurrent.futures.CancelledError as exc:
            raise OptimizationStopped("optimization stopped") from exc
        finally:
            with self._lock:
                self._in_flight.discard(future)

    def request_stop(self) -> None:
        """Stop at the next step and cancel the steps in flight (their runs are stored as
        interrupted): the optimization is cancelled, from any thread."""
        self.stop_requested = True
        with self._lock:
            in_flight = list(self._in_flight)
        for future in in_flight:
            future.cancel()

    # ------------------------------------------------------------------ evaluation
    async def evaluate(self, examples: list[Example], candidate: dict[str, str]) -> Evaluation:
        """Run ``candidate`` on ``examples`` (one split) as one stored run; the rows come
        back aligned with ``examples`` (a minibatch may hold an item twice)."""
        split = examples[0].split
        digest = candidate_hash(candidate)
        unique: dict[str, Item] = {}
        for example in examples:
            unique.setdefault(example.item.id, example.item)
        items = list(unique.values())
        cost = 0.0
        reused = None
        if split != "train":
            reused = await asyncio.to_thread(self._stored_results, digest, split, list(unique))
        if reused is not None:
            run_id, results = reused
        else:
            run_id, results, cost = await self.evaluator.run(self, items, candidate, split)
        by_id = {r.item_id: r for r in results}
        missing = [i for i in unique if i not in by_id]
        if missing:
            raise RuntimeError(
                f"evaluation run {run_id} of split {split!r} has no result for item "
                f"{missing[0]!r}: the run did not finish"
            )
        rows = self.evaluator.rows(by_id, examples)
        mean = sum(r.score for r in rows) / len(rows)
        self.progress.cost_usd += cost
        if split == "test":
            self.progress.test_metric_calls += 0 if reused else len(items)
        await asyncio.to_thread(
            self._record_evaluation, run_id, digest, split, len(examples), mean, cost
        )
        event = Evaluated(
            optimization_id=self.id,
            iteration=self.iteration,
            split=split,
            candidate_hash=digest,
            items=len(examples),
            mean_score=mean,
            run_id=run_id,
            reused=reused is not None,
            cost_usd=self.progress.cost_usd,
        )
        return Evaluation(rows, run_id, mean, event)

    async def run_items(
        self,
        items: list[Item],
        target: Target,
        scorers: list[Scorer],
        candidate: dict[str, str],
        split: str,
    ) -> tuple[str, list[ItemResult], float]:
        """Run ``target`` on ``items`` with ``scorers`` as one stored run of this
        optimization (named and tagged with the split, the candidate and the iteration):
        (run id, results, cost of target and judges)."""
        digest = candidate_hash(candidate)
        on_ray = self.backend.backend == "ray"
        memory = MemorySink()
        options = RunOptions.of(
            self.backend,
            concurrency=self.config.concurrency,
            timeout_s=self.config.timeout,
            name=f"{self.config.name or 'optimize'} · {split} · {digest[:8]}",
            metadata={
                "optimization_id": self.id,
                "split": split,
                "candidate_hash": digest,
                "iteration": self.iteration,
            },
            progress=False,
            # Ray workers store the results themselves: they are read back from the store
            sink=None if on_ray else memory,
        )
        plan = plan_run(
            lambda: items,
            target,
            scorers,
            options,
            total_items=len(items),
            data_source=f"optimization {self.id[:8]} {split}",
        )
        if on_ray:
            return await self._run_on_ray(plan, options, items)
        await asyncio.to_thread(self.store.runs.create, plan.info, items)
        outcome = await execute_run(plan, StoreSink(self.store), options)
        summary = outcome.summary
        cost = (summary.target_cost_usd or 0.0) + (summary.cost_usd or 0.0)
        return plan.info.id, memory.results, cost

    async def _run_on_ray(
        self, plan: RunPlan, options: RunOptions, items: list[Item]
    ) -> tuple[str, list[ItemResult], float]:
        """The evaluation run on Ray workers, through the stored-run path every Ray run
        takes (checks before the run is stored, units, summary from the stored rows)."""
        from assay.operations.stored_runs import execute_stored, prepare_backend

        dispatch = prepare_backend(self.store, plan, options)
        await asyncio.to_thread(self.store.runs.create, plan.info, items)
        run = await execute_stored(self.store, plan, options, dispatch)
        results = await asyncio.to_thread(lambda: list(self.store.runs.results(plan.info.id)))
        summary = run.summary
        cost = (summary.target_cost_usd or 0.0) + (summary.cost_usd or 0.0)
        return plan.info.id, results, cost

    def _stored_results(
        self, digest: str, split: str, item_ids: list[str]
    ) -> tuple[str, list[ItemResult]] | None:
        """A completed stored run of this candidate on these items, if one exists (a resume
        repeats the seed's validation evaluation; it is read back, not paid for twice)."""
        wanted = set(item_ids)
        records = self.store.optimizations.evaluations(self.id)
        for record in reversed(records):
            if record.candidate_hash != digest or record.split != split or not record.run_id:
                continue
            if not self.store.runs.exists(record.run_id):
                continue
            if self.store.runs.get(record.run_id).status != "completed":
                continue
            results = [r for r in self.store.runs.results(record.run_id) if r.item_id in wanted]
            if {r.item_id for r in results} == wanted:
                return record.run_id, results
        return None

    def _record_evaluation(
        self,
        run_id: str | None,
        digest: str,
        split: str,
        metric_calls: int,
        mean: float,
        cost: float,
    ) -> None:
        self.store.optimizations.add_evaluation(
            self.id,
            run_id=run_id,
            candidate_hash=digest,
            split=split,
            iteration=self.iteration,
            metric_calls=metric_calls,
            mean_score=mean,
            cost_usd=cost,
        )
        self.save_progress()

    # ------------------------------------------------------------------ reflection
    async def reflect(self, component: str, prompt: str) -> str:
        """Ask the reflection model; the prompt and the answer (or error) are stored."""
        answer: str | None = None
        error: str | None = None
        cost: float | None = None
        try:
            response = await self.reflection_model.generate(
                [ChatMessage(role="user", content=prompt)],
                settings=self.config.reflection_settings,
            )
            answer = response.text
            cost = response.cost_usd
            return answer
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.progress.cost_usd += cost or 0.0
            try:
                await asyncio.to_thread(
                    self._record_reflection, component, prompt, answer, error, cost
                )
            except Exception as exc:
                if self.failure is None:
                    self.failure = exc
                raise

    def _record_reflection(
        self,
        component: str,
        prompt: str,
        answer: str | None,
        error: str | None,
        cost: float | None,
    ) -> None:
        self.store.optimizations.add_reflection(
            self.id,
            iteration=self.iteration,
            component=component,
            prompt=prompt,
            answer=answer,
            error=error,
            cost_usd=cost,
        )
        self.save_progress()
