"""Run a coroutine from synchronous code without ever nesting event loops.

With no loop running in this thread, ``asyncio.run`` is used. Inside a running loop
(a notebook, an async web handler) the coroutine runs on a fresh loop in a worker thread and
the caller blocks on it: no ``nest_asyncio``, no re-entering the caller's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``factory()`` to completion and return its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_boxed(factory)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-run-sync") as pool:
        return pool.submit(_run_boxed, factory).result()


def _run_boxed(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run`` of a main task that returns ``None``, the result handed over in a box.

    Why: when ``asyncio.run`` ends in the main thread it restores the SIGINT handler, and
    ``signal.signal``/``signal.getsignal`` try to turn the handler it had installed (a
    partial holding the main task) into a ``Handlers`` enum; the failed lookup formats the
    partial's ``repr``, which includes the finished task's result. For a ``RunResult`` of
    1,000 items that ``repr`` cost about 0.45 s of CPU, twice, after the run had finished.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await factory())

    asyncio.run(main())
    return box[0]
