"""Work the server does in the background of its event loop: scorer previews whose judge
scorers answer later, runs and prompt optimizations started over HTTP, and compare
statistics a page did not wait for.

Runs are stored as they go (the store is the truth: the progress stream reads it), so a
run outlives the request that started it; ``RunJobs`` only keeps the ``asyncio.Task`` (to
cancel it) and lets live listeners see each finished item. Previews keep their few events
in memory for ``PREVIEW_TTL_S`` so a client that subscribes late still sees them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.operations.run_requests import (
    RunNotStartedError,
    RunRequest,
    check_run_request,
    start_run_async,
)
from assay.operations.scorer_preview import (
    FieldErrors,
    PreviewRequest,
    PreviewRow,
    is_immediate,
    score_row,
)
from assay.optimize.events import OptimizeEvent
from assay.optimize.optimizer import StartedOptimization, prepare_resume
from assay.optimize.requests import OptimizeRequest, start_requested
from assay.runner.hooks import RunHooks
from assay.scoring.scorer import Scorer
from assay.server.base_urls import url_problems
from assay.server.client_view import score_for_client
from assay.server.run_compare import compare_statistics
from assay.server.sse import EventChannel
from assay.store import Store
from assay.types import ItemResult, RunInfo

log = logging.getLogger("assay.server")

PREVIEW_TTL_S = 600.0
MAX_PREVIEWS = 200
POLL_S = 0.25


def check_urls(body: Any, allowed: Sequence[str]) -> None:
    """``FieldErrors`` for every URL of ``body`` the base-URL policy refuses
    (``server.base_urls.url_problems``, the one function every entry point calls)."""
    problems = url_problems(body, allowed)
    if problems:
        raise FieldErrors(problems)


class PreviewJobs:
    """Scorer previews: code scorers answer in the request, judge scorers here."""

    def __init__(self, *, allowed_base_urls: Sequence[str] = ()) -> None:
        self.allowed_base_urls = tuple(allowed_base_urls)
        self._channels: dict[str, tuple[float, EventChannel]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def check_base_urls(self, request: PreviewRequest) -> None:
        """The base-URL policy (``server.base_urls``) for a preview request: ``FieldErrors``
        naming each refused URL (``scorers[i].params.base_url``)."""
        check_urls(request.model_dump(mode="json"), self.allowed_base_urls)

    async def start(
        self, scorers: list[Scorer], rows: list[PreviewRow]
    ) -> tuple[str, list[list[dict[str, Any]]]]:
        """Score what can be scored now; schedule the rest. Returns the test id and the
        result grid (``{"status": "pending"}`` where a judge result will follow)."""
        self._expire()
        test_id = uuid.uuid4().hex
        channel = EventChannel()
        self._channels[test_id] = (time.monotonic(), channel)
        grid: list[list[dict[str, Any]]] = []
        later: list[tuple[int, int]] = []
        for i, row in enumerate(rows):
            cells: list[dict[str, Any]] = []
            for j, scorer in enumerate(scorers):
                if is_immediate(scorer):
                    scored = score_for_client(await score_row(scorer, row))
                    cells.append(scored.model_dump(mode="json"))
                else:
                    cells.append({"status": "pending"})
                    later.append((i, j))
            grid.append(cells)
        task = asyncio.create_task(self._finish(channel, scorers, rows, later))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return test_id, grid

    async def _finish(
        self,
        channel: EventChannel,
        scorers: list[Scorer],
        rows: list[PreviewRow],
        cells: list[tuple[int, int]],
    ) -> None:
        async def one(i: int, j: int) -> None:
            result = score_for_client(await score_row(scorers[j], rows[i]))
            channel.publish(
                "result", {"row": i, "scorer": j, "result": result.model_dump(mode="json")}
            )

        try:
            await asyncio.gather(*(one(i, j) for i, j in cells))
        finally:
            channel.publish("done", {"results": len(cells)})
            channel.close()

    def events(self, test_id: str) -> EventChannel | None:
        entry = self._channels.get(test_id)
        return None if entry is None else entry[1]

    def _expire(self) -> None:
        cutoff = time.monotonic() - PREVIEW_TTL_S
        for key, (created, channel) in list(self._channels.items()):
            if channel.closed and created < cutoff:
                del self._channels[key]
        while len(self._channels) >= MAX_PREVIEWS:
            del self._channels[next(iter(self._channels))]


class RunJobs:
    """Runs executing in this process."""

    def __init__(self, store: Store, *, allowed_base_urls: Sequence[str] = ()) -> None:
        self._store = store
        self.allowed_base_urls = tuple(allowed_base_urls)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._listeners: dict[str, set[asyncio.Queue[ItemResult]]] = {}

    def is_live(self, run_id: str) -> bool:
        task = self._tasks.get(run_id)
        return task is not None and not task.done()

    async def start(self, request: RunRequest) -> str:
        """Start ``request``; returns its run id once the run is stored. Errors before
        that (a base URL the policy refuses, unknown dataset, bad scorer config) raise here,
        in the request."""
        check_urls(request.model_dump(mode="json"), self.allowed_base_urls)
        check_run_request(request)
        return await self._launch(
            lambda hooks: start_run_async(request, store=self._store, hooks=hooks)
        )

    async def resume(self, run_id: str) -> str:
        """Finish a stored run; its stored target and scorers must pass the base-URL policy
        like a new request's (``FieldErrors`` naming ``target.<key>``/``scorers[i].params...``)."""
        from assay.operations.stored_runs import resume_run_async

        record = await asyncio.to_thread(self._store.runs.get, run_id)
        stored = {
            "target": record.info.target.config,
            "scorers": [{"params": spec.params} for spec in record.info.scorers],
        }
        check_urls(stored, self.allowed_base_urls)
        return await self._launch(
            lambda hooks: resume_run_async(run_id, store=self._store, hooks=hooks, progress=False)
        )

    async def _launch(self, make: Any) -> str:
        loop = asyncio.get_running_loop()
        started: asyncio.Future[str] = loop.create_future()

        def on_start(info: RunInfo) -> None:
            if not started.done():
                self._tasks[info.id] = task
                started.set_result(info.id)

        def on_item(result: ItemResult) -> None:
            if started.done():
                for queue in self._listeners.get(started.result(), ()):
                    if queue.qsize() < 1000:  # a slow listener misses items, never stalls the run
                        queue.put_nowait(result)

        hooks = RunHooks(on_run_start=on_start, on_item_complete=on_item)
        task: asyncio.Task[Any] = asyncio.create_task(make(hooks))
        done, _ = await asyncio.wait({started, task}, return_when=asyncio.FIRST_COMPLETED)
        if started in done:
            run_id = started.result()
            task.add_done_callback(self._log_failure)
            task.add_done_callback(lambda _: self._forget(run_id, task))
            return run_id
        try:
            task.result()
        except (LookupError, FieldErrors):
            raise  # not found (404) / bad field (422): the app maps them as they are
        except ValueError as exc:  # bad data, target or settings: the caller's input
            raise RunNotStartedError(f"the run did not start: {exc}") from exc
        raise RuntimeError("the run finished without starting")  # pragma: no cover

    def _forget(self, run_id: str, task: asyncio.Task[Any]) -> None:
        """Drop a finished run's task (the store keeps everything about it)."""
        if self._tasks.get(run_id) is task:
            del self._tasks[run_id]

    @staticmethod
    def _log_failure(task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background run failed", exc_info=task.exception())

    async def cancel(self, run_id: str) -> bool:
        """Cancel a run of this process (it stops and is stored as interrupted); ``False``
        when no such run is executing here."""
        task = self._tasks.get(run_id)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task  # its failure, if any, is logged by _log_failure
        return True

    def listen(self, run_id: str) -> asyncio.Queue[ItemResult]:
        """A queue that receives the run's items as they complete (while it runs here)."""
        queue: asyncio.Queue[ItemResult] = asyncio.Queue()
        self._listeners.setdefault(run_id, set()).add(queue)
        return queue

    def unlisten(self, run_id: str, queue: asyncio.Queue[ItemResult]) -> None:
        listeners = self._listeners.get(run_id)
        if listeners is not None:
            listeners.discard(queue)
            if not listeners:
                del self._listeners[run_id]

    async def shutdown(self) -> None:
        for run_id in list(self._tasks):
            await self.cancel(run_id)


class OptimizationJobs:
    """Prompt optimizations executing in this process.

    Like runs, an optimization is stored as it goes (the event stream reads the store, so it
    follows CLI optimizations too); this keeps the ``asyncio.Task`` (to cancel it) and hands
    the optimizer's in-process events to live listeners (the proposals' diffs and the
    rejections the store does not keep). GEPA calls ``on_event`` from its own thread, so the
    events cross to the loop with ``call_soon_threadsafe``.
    """

    MAX_QUEUED = 1000
    """A slow listener misses events beyond this, never stalls the optimization."""

    def __init__(
        self, store: Store, *, data_dir: Path, allowed_base_urls: Sequence[str] = ()
    ) -> None:
        self._store = store
        self.data_dir = data_dir
        self.allowed_base_urls = tuple(allowed_base_urls)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._listeners: dict[str, set[asyncio.Queue[OptimizeEvent]]] = {}

    def is_live(self, optimization_id: str) -> bool:
        task = self._tasks.get(optimization_id)
        return task is not None and not task.done()

    async def start(self, request: OptimizeRequest) -> str:
        """Check ``request`` (base-URL policy, then everything ``start_requested`` checks),
        store it, and execute it in the background; returns its id. Errors raise here, in
        the request, before anything is stored."""
        check_urls(request.model_dump(mode="json"), self.allowed_base_urls)
        started = await asyncio.to_thread(
            start_requested, request, self._store, data_dir=self.data_dir
        )
        return self._launch(started)

    async def resume(self, optimization_id: str) -> str:
        """Continue an interrupted or failed optimization (its stored config's base URLs
        must pass the policy too); ``OptimizeResumeError`` when it cannot be resumed."""
        record = await asyncio.to_thread(self._store.optimizations.get, optimization_id)
        check_urls(record.config, self.allowed_base_urls)
        started = await asyncio.to_thread(prepare_resume, record.id, self._store)
        return self._launch(started)

    def _launch(self, started: StartedOptimization) -> str:
        loop = asyncio.get_running_loop()
        optimization_id = started.id

        def deliver(event: OptimizeEvent) -> None:
            for queue in self._listeners.get(optimization_id, ()):
                if queue.qsize() < self.MAX_QUEUED:
                    queue.put_nowait(event)

        def on_event(event: OptimizeEvent) -> None:  # GEPA's thread
            loop.call_soon_threadsafe(deliver, event)

        task: asyncio.Task[Any] = asyncio.create_task(started.run(on_event))
        self._tasks[optimization_id] = task
        task.add_done_callback(self._log_failure)
        task.add_done_callback(lambda _: self._forget(optimization_id, task))
        return optimization_id

    def _forget(self, optimization_id: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(optimization_id) is task:
            del self._tasks[optimization_id]

    @staticmethod
    def _log_failure(task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background optimization failed", exc_info=task.exception())

    async def cancel(self, optimization_id: str) -> bool:
        """Stop an optimization of this process: GEPA's thread stops at its next step, the
        steps in flight are cancelled, and it is stored as ``interrupted`` (resumable).
        ``False`` when no such optimization is executing here."""
        task = self._tasks.get(optimization_id)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task  # returns once GEPA's thread has stopped and the status is stored
        return True

    def listen(self, optimization_id: str) -> asyncio.Queue[OptimizeEvent]:
        """A queue of the optimizer's events (while it runs in this process)."""
        queue: asyncio.Queue[OptimizeEvent] = asyncio.Queue()
        self._listeners.setdefault(optimization_id, set()).add(queue)
        return queue

    def unlisten(self, optimization_id: str, queue: asyncio.Queue[OptimizeEvent]) -> None:
        listeners = self._listeners.get(optimization_id)
        if listeners is not None:
            listeners.discard(queue)
            if not listeners:
                del self._listeners[optimization_id]

    async def shutdown(self) -> None:
        for optimization_id in list(self._tasks):
            await self.cancel(optimization_id)


class StatisticsJobs:
    """Compare statistics computed after the page that needed them was answered.

    The bootstrap and ranking are CPU-bound numpy work over every paired item, so they run
    in one worker thread rather than on the event loop (a request thread would hold its
    client). One job per (baseline, runs, threshold) is queued at a time; the result lands
    in ``run_compare``'s cache, where the next page or ``compare/statistics`` finds it.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-statistics")
        self._queued: set[tuple[str, tuple[str, ...], float]] = set()
        self._lock = threading.Lock()

    def start(self, baseline: str, runs: list[str], threshold: float) -> bool:
        """Queue the statistics of ``runs`` against ``baseline``; ``False`` when the same
        job is already queued or running (it will fill the cache)."""
        key = (baseline, tuple(runs), threshold)
        with self._lock:
            if key in self._queued:
                return False
            self._queued.add(key)
        try:
            future = self._pool.submit(
                compare_statistics, baseline, list(runs), threshold=threshold, store=self._store
            )
        except RuntimeError:  # shut down: the client can still ask compare/statistics
            with self._lock:
                self._queued.discard(key)
            return False
        future.add_done_callback(lambda done: self._finished(key, done))
        return True

    def is_queued(self, baseline: str, runs: list[str], threshold: float) -> bool:
        with self._lock:
            return (baseline, tuple(runs), threshold) in self._queued

    def _finished(self, key: tuple[str, tuple[str, ...], float], future: Future[Any]) -> None:
        with self._lock:
            self._queued.discard(key)
        if not future.cancelled() and future.exception() is not None:
            log.error("compare statistics %s failed", key, exc_info=future.exception())

    def shutdown(self) -> None:
        """Drop queued jobs; a running one finishes in its thread (numpy cannot be
        interrupted) without holding up the server's exit."""
        self._pool.shutdown(wait=False, cancel_futures=True)
