"""The worker threads plain ``def`` targets run on: hand-offs batched both ways.

Why not ``asyncio.to_thread``: a thread cannot be killed, so a sync target that hangs keeps
its thread after its item timed out. In the default executor that thread would be joined
when ``asyncio.run`` ends (the script would hang at the very end of a finished run) and it
would hold one of only ``cpu + 4`` workers for good. These threads are daemons nobody joins.

Why not one wake-up per call: a thread hop costs two context switches and a write to the
event loop's self-pipe, about 60 µs on a loaded 2-core machine — three times what the rest
of the runner spends on an item. Here calls queue in a deque and results come back in
batches:

- a thread that finishes a call takes the next queued one without sleeping, so fast
  targets run back to back on one or two threads;
- before a thread starts a call it makes sure one more thread is awake when calls are
  still queued (waking an idle one, or starting one). A call that blocks (network, disk) or
  hangs therefore never holds up the calls queued behind it: with slow targets every call
  in flight gets its own thread, as with a thread per call, while fast targets cause few
  wake-ups;
- finished results are handed to the event loop in one ``call_soon_threadsafe`` per batch
  (one self-pipe write for all the results that finished meanwhile).

A call runs with the context variables of the task that submitted it (``copy_context``),
and on whichever pool thread is free: thread-local state persists between calls on the same
thread, as with any thread pool, but no call can rely on running on a given thread.
Cancelling the awaiting task (a per-item timeout) abandons the call: a queued call is then
skipped, a running one finishes in the background and its result is dropped. At most
``max_idle`` idle threads are kept.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class _Call:
    context: contextvars.Context
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


@dataclass(slots=True)
class _Finished:
    """Results of one event loop waiting to be handed over, and whether a hand-over is
    already scheduled on that loop."""

    results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = field(
        default_factory=list
    )
    scheduled: bool = False


class CallPool:
    """Runs blocking callables on daemon threads, batching the hand-offs (see the module)."""

    def __init__(self, *, max_idle: int = 32, name: str = "assay-target") -> None:
        if max_idle < 1:
            raise ValueError("max_idle must be at least 1")
        self.max_idle = max_idle
        self.name = name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._calls: deque[_Call] = deque()
        self._threads = 0
        self._sleeping = 0  # threads waiting on ``_wake``
        self._awake = 0  # threads woken or started that have not yet looked for a call
        self._finished: dict[asyncio.AbstractEventLoop, _Finished] = {}
        self.started_threads = 0
        """Threads started since the pool was made (a measure of wake-up churn)."""

    @property
    def threads(self) -> int:
        """Threads alive now (busy or idle)."""
        return self._threads

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a pool thread, with this task's context variables."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        call = _Call(contextvars.copy_context(), fn, args, kwargs, loop, future)
        with self._lock:
            self._calls.append(call)
            self._ensure_awake()
        return await future

    # ------------------------------------------------------------------ threads
    def _ensure_awake(self) -> None:
        """With the lock held: make sure a thread will look at the queue soon."""
        if not self._calls or self._awake:
            return
        self._awake += 1
        if self._sleeping:
            self._sleeping -= 1
            self._wake.notify()
        else:
            self._threads += 1
            self.started_threads += 1
            threading.Thread(
                target=self._work, name=f"{self.name}-{self.started_threads}", daemon=True
            ).start()

    def _work(self) -> None:
        with self._lock:
            self._awake -= 1
        while True:
            with self._lock:
                while not self._calls:
                    if self._sleeping >= self.max_idle:
                        self._threads -= 1
                        return
                    self._sleeping += 1
                    self._wake.wait()
                    self._awake -= 1  # the notifier counted this thread as awake
                call = self._calls.popleft()
                self._ensure_awake()  # the rest of the queue must not wait on this call
            if call.future.cancelled():  # its item timed out or was cancelled while queued
                continue
            try:
                result = call.context.run(call.fn, *call.args, **call.kwargs)
            except BaseException as exc:  # handed to the awaiting task
                self._finish(call, None, exc)
            else:
                self._finish(call, result, None)

    def _finish(self, call: _Call, result: Any, error: BaseException | None) -> None:
        loop = call.loop
        with self._lock:
            finished = self._finished.get(loop)
            if finished is None:
                finished = self._finished[loop] = _Finished()
            finished.results.append((call.future, result, error))
            if finished.scheduled:
                return
            finished.scheduled = True
        try:
            loop.call_soon_threadsafe(self._hand_over, loop)
        except RuntimeError:  # a closed loop: nobody is waiting any more
            with self._lock:
                self._finished.pop(loop, None)

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """On ``loop``: settle every future that finished since the last hand-over."""
        with self._lock:
            finished = self._finished.pop(loop, None)
        if finished is None:
            return
        for future, result, error in finished.results:
            if future.done():  # cancelled: the caller gave up on this call
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)


TARGET_POOL = CallPool()
"""The pool plain ``def`` targets run on."""
