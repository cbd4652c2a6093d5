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
        return asyncio.run(factory())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-run-sync") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()
