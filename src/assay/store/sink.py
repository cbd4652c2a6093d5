"""``StoreSink``: the runner's results written to the store in batches, off the event loop.

Why a writer thread: a commit is a disk sync (or a network round trip to PostgreSQL); doing
one per item on the event loop would cap a run at a few hundred items per second and stall
every in-flight target call meanwhile. ``write`` only hands the result to a queue; one
thread drains it in batches (up to ``batch_size`` results, or whatever arrived within
``max_delay_s`` of the first), each batch one transaction — a result and its scores are
never half-stored.

Why a semaphore: the queue holds at most ``max_pending`` results; past that ``write`` waits
(asyncio backpressure) until the writer has committed some, so memory stays flat however
many items a run has, and a slow disk slows the run instead of filling RAM. The bound is
two batches (1,000 results): one being committed while the next fills. A deeper queue
does not make a run faster (when the writer is the slower side the queue is full whatever
its size), it only holds more results in memory: 5,000 pending results were ~6 MiB, and a
100k-item run reached the bound where a 10k-item one did not.

Why the queue holds encoded rows, not ``ItemResult``s: ``write`` turns each result into its
rows on the event loop (``result_inserts.encode_result``: one flat tuple of strings, numbers
and ``None``) and queues that. A result waits in the queue long enough for the cyclic
collector to promote it to its oldest generation; ``ItemResult``s queued there kept
triggering full collections, each a walk of the whole heap (≈ 20 µs per item of a
100,000-item run, plus ≈ 15 in the young generations: benchmarks/HISTORY.md). A tuple of
atomic values is untracked by the collector the first time it sees it, and the
``ItemResult`` dies as soon as ``write`` returns. The host process's collector settings are
never touched. The price: the encoding (≈ 11 µs for a short result, a JSON dump of each
large text) runs on the event loop where the writer thread did it before. A result the
encoder cannot write fails its batch as a failed commit would (nothing of the batch is
stored, the error is sticky).

Why errors are sticky: a failed batch must not vanish into a log. The first writer error is
kept; every later ``write`` raises it, ``finish`` raises it (after marking the run
``interrupted``, so ``assay runs resume`` redoes exactly the unsaved items).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.runner.sink import ResultSink
from assay.store.codec import IdSource
from assay.store.engine import Store
from assay.store.errors import StoreWriteError
from assay.store.result_inserts import EncodedResult, encode_result
from assay.store.runs_repo import LEASE_S, new_lease_owner
from assay.store.summary_source import StoredSummarySource
from assay.types import ItemResult, RunInfo, RunStatus, RunSummary

log = logging.getLogger(__name__)


@dataclass
class _Refused:
    """A result ``encode_result`` could not encode: its batch fails with ``error``."""

    error: Exception


@dataclass
class _Flush:
    """Marker: everything queued before it is committed when ``done`` resolves."""

    done: concurrent.futures.Future[None]


_STOP = object()


class StoreSink:
    """A ``ResultSink`` that persists results through ``store.runs``."""

    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = 500,
        max_delay_s: float = 0.05,
        max_pending: int = 1000,
    ) -> None:
        if batch_size < 1 or max_pending < 1:
            raise ValueError("batch_size and max_pending must be at least 1")
        self.store = store
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s
        self.max_pending = max_pending
        self.written = 0
        """Results committed so far (by this sink)."""
        self._run_id: str | None = None
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lease_owner = new_lease_owner()
        self._lease_stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._new_id = IdSource()
        """Result and score ids, drawn on the event loop (only ``write`` uses it)."""

    # ------------------------------------------------------------------ ResultSink
    async def start(self, info: RunInfo, *, resumed: bool) -> None:
        """Create the run (unless the caller already did, e.g. with its inline items) and
        mark it running; a resumed run is only marked running."""
        if self._thread is not None:
            raise RuntimeError("StoreSink.start called twice without finish")
        await asyncio.to_thread(self._start_run, info, resumed)
        self._run_id = info.id
        self._error = None
        self._loop = asyncio.get_running_loop()
        self._slots = asyncio.Semaphore(self.max_pending)
        self._thread = threading.Thread(
            target=self._drain, name=f"assay-store-writer-{info.id[:8]}", daemon=True
        )
        self._thread.start()

    async def write(self, result: ItemResult) -> None:
        """Queue one result; waits while ``max_pending`` results are not yet committed."""
        if self._slots is None or self._thread is None:
            raise RuntimeError("StoreSink.write called before start or after finish")
        self._raise_if_failed()
        await self._slots.acquire()
        if self._error is not None:
            self._slots.release()
            self._raise_if_failed()
        assert self._run_id is not None
        message: EncodedResult | _Refused
        try:
            message = encode_result(self._run_id, result, self._new_id)
        except Exception as exc:  # the writer fails its batch, as a refused commit
            message = _Refused(exc)
        self._queue.put(message)

    async def finish(self, run_id: str, status: RunStatus, summary: RunSummary) -> None:
        """Commit everything queued, then record the final status and summary."""
        await self._wait_committed()
        self._stop_thread()
        self._stop_heartbeat()
        if self._error is not None:
            try:  # the unsaved items must be redone: leave the run resumable
                await asyncio.to_thread(self.store.runs.finish, run_id, "interrupted", summary)
            except Exception as exc:
                log.warning("could not mark run %s interrupted: %s", run_id, exc)
            self._raise_if_failed()
        await asyncio.to_thread(self.store.runs.finish, run_id, status, summary)

    async def summary_source(self) -> StoredSummarySource:
        """Read by the engine (an optional method of any sink): once everything queued is
        committed, the run's stored rows are the source of its summary, so the runner keeps
        no scores or latencies in memory while the run goes (raises a writer error)."""
        await self._wait_committed()
        self._raise_if_failed()
        if self._run_id is None:
            raise RuntimeError("StoreSink.summary_source called before start")
        return self.store.runs.summary_source(self._run_id)

    # ------------------------------------------------------------------ extras
    async def flush(self) -> None:
        """Wait until every result queued so far is committed (raises a writer error)."""
        await self._wait_committed()
        self._raise_if_failed()

    # ------------------------------------------------------------------ internals
    async def _wait_committed(self) -> None:
        if self._thread is None:
            return
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._queue.put(_Flush(done))
        await asyncio.wrap_future(done)

    def _start_run(self, info: RunInfo, resumed: bool) -> None:
        """Create the run if needed, take its lease (``RunLeasedError`` when another live
        process holds it: two resumes of one run never score the same items twice), mark it
        running, and keep the lease renewed until ``finish``."""
        runs = self.store.runs
        if not resumed and not runs.exists(info.id):
            runs.create(info)
        runs.acquire_lease(info.id, self._lease_owner)
        runs.mark_started(info.id)
        self._lease_stop.clear()
        self._heartbeat = threading.Thread(
            target=self._renew_lease,
            args=(info.id,),
            name=f"assay-lease-{info.id[:8]}",
            daemon=True,
        )
        self._heartbeat.start()

    def _renew_lease(self, run_id: str) -> None:
        """The heartbeat thread: renew the lease every quarter of its length."""
        while not self._lease_stop.wait(LEASE_S / 4):
            try:
                if not self.store.runs.renew_lease(run_id, self._lease_owner):
                    log.warning("run %s: lost its lease to another process", run_id)
                    return
            except Exception as exc:  # a transient database error: try again next beat
                log.warning("run %s: could not renew its lease: %s", run_id, exc)

    def _stop_heartbeat(self) -> None:
        self._lease_stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
            self._heartbeat = None

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise StoreWriteError(
                f"writing results of run {self._run_id!r} failed: {self._error}"
            ) from self._error

    def _stop_thread(self) -> None:
        thread = self._thread
        if thread is None:
            return
        self._queue.put(_STOP)
        thread.join()
        self._thread = None

    def _drain(self) -> None:
        """The writer thread: collect a batch, commit it, resolve flush markers after it."""
        while True:
            message = self._queue.get()
            batch: list[EncodedResult | _Refused] = []
            flushes: list[concurrent.futures.Future[None]] = []
            stop = False
            deadline = time.monotonic() + self.max_delay_s
            while True:
                if isinstance(message, _Flush):
                    flushes.append(message.done)
                    break
                if message is _STOP:
                    stop = True
                    break
                assert isinstance(message, tuple | _Refused)
                batch.append(message)
                if len(batch) >= self.batch_size:
                    break
                try:
                    message = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
            if batch:
                self._commit(batch)
            del batch, message  # the committed results go now, not when the next one arrives
            for done in flushes:
                # a waiter cancelled meanwhile (a run's Cancel) cancels its future: setting
                # it would raise here and kill the writer, and the next flush (``finish``)
                # would then wait for ever
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    done.set_result(None)
            if stop:
                return

    def _commit(self, batch: list[EncodedResult | _Refused]) -> None:
        if self._error is None:  # after a failure, later results are dropped, not written
            try:
                assert self._run_id is not None
                encoded: list[EncodedResult] = []
                for message in batch:
                    if isinstance(message, _Refused):
                        raise message.error
                    encoded.append(message)
                self.store.runs.write_results(self._run_id, encoded)
                self.written += len(batch)
            except BaseException as exc:
                log.error("store writer failed on run %s: %s", self._run_id, exc)
                self._error = exc
        self._release(len(batch))

    def _release(self, count: int) -> None:
        loop, slots = self._loop, self._slots
        if loop is None or slots is None:
            return

        def release() -> None:
            for _ in range(count):
                slots.release()

        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(release)


if TYPE_CHECKING:

    def _implements_result_sink(sink: StoreSink) -> ResultSink:
        """mypy checks here that ``StoreSink`` satisfies the runner's protocol."""
        return sink
