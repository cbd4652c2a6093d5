"""Worker threads for synchronous targets that a timeout may abandon.

Why not ``asyncio.to_thread``: a thread cannot be killed, so a sync target that hangs keeps
its thread after the item timed out. In the default executor that thread would be joined
when ``asyncio.run`` ends (the script would hang at the very end of a finished run) and it
would take one of only ``cpu + 4`` workers for good. These threads are daemons that nobody
joins, and the pool grows when every thread is busy, so hung calls never block other items
or the end of the program. Idle threads wait for work; at most ``max_idle`` are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


class DaemonThreadPool:
    """Runs blocking callables on daemon threads, one call per thread at a time."""

    def __init__(self, *, max_idle: int = 16, name: str = "assay-target") -> None:
        self.max_idle = max_idle
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    @property
    def threads(self) -> int:
        """Threads alive now (busy or idle)."""
        return self._threads

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a pool thread (with this task's context variables).

        Cancelling the await (a timeout) abandons the call: its thread finishes it in the
        background and its result is dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        context = contextvars.copy_context()

        def call() -> T:
            return context.run(fn, *args, **kwargs)

        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"{self.name}-{self._threads}", daemon=True
                ).start()
        self._jobs.put((call, loop, future))
        return await future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:  # pragma: no cover - not used: daemon threads end with the process
                return
            call, loop, future = job
            try:
                result = call()
            except BaseException as exc:  # handed to the awaiting task
                _settle(loop, future, None, exc)
            else:
                _settle(loop, future, result, None)
            with self._lock:
                if self._idle >= self.max_idle:
                    self._threads -= 1
                    return
                self._idle += 1


def _settle(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    result: Any,
    error: BaseException | None,
) -> None:
    def settle() -> None:
        if future.done():  # cancelled: the caller gave up on this call
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        loop.call_soon_threadsafe(settle)


TARGET_THREADS = DaemonThreadPool()
"""The pool sync function targets run on."""
