"""Modules imported in a background thread while the importing thread has other work.

Why: a short judge run's wall time is its start-up plus its model calls' latency. Two
imports sit on that path although the run could do without them for a while: the HTTP
client (``aiohttp``, about 0.15-0.3 s of CPU, part of it building TLS contexts with the GIL
released) is needed at the first request, numpy and the summary statistics (about 0.1-0.3 s)
only at the end. Started from a thread as soon as it is known that they will be needed
(a judge's model string is configured; a run has no unit left to start), they overlap
the rest of the start-up or the wait for answers, and the code that needs them finds them
loaded. Nothing changes in what is imported or computed, only when and on which thread.
When matters: a thread importing while the event loop is busy makes each of the loop's
wake-ups wait for the GIL behind it (measured: a 200-item run got slower than with no
thread), so the summary's imports start in the run's tail, when the loop mostly waits.

A module already imported is not imported again, and no thread starts when there is nothing
to import. The thread only imports and ends. An importer that needs a module the thread is
importing waits for it (Python's per-module import lock), and ``wait`` joins the thread
(with a timeout) for callers that want the whole list done first. An import that fails in
the thread is left for the caller's own import to raise, in its thread, with its traceback.

A ``fork()`` (``multiprocessing``'s default start method on Linux) waits for running
imports to finish first: a child forked while this thread held a module's import lock would
inherit the lock held by a thread it does not have, and hang on its first import of that
module.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Sequence

WAIT_S = 60.0
"""How long ``wait`` waits for the imports: far above their cost (well under a second), a
bound so that a stuck import cannot hang its caller for ever."""


_running: set[threading.Thread] = set()
_running_lock = threading.Lock()


FORK_WAIT_S = 10.0
"""How long a fork waits for a running background import: bounded, because the import could
itself be waiting for a module whose import the forking thread is in the middle of."""


def _finish_before_fork() -> None:
    """``os.register_at_fork(before=...)``: no fork in the middle of a background import."""
    with _running_lock:
        threads = [t for t in _running if t is not threading.current_thread()]
    for thread in threads:
        thread.join(FORK_WAIT_S)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_finish_before_fork)


class ImportWarmer:
    """Imports ``modules`` (those not imported yet) in one daemon thread, from ``start``."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = tuple(name for name in modules if name not in sys.modules)
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start importing (once; nothing to do: no thread)."""
        if self._thread is not None or not self.modules:
            return
        thread = self._thread = threading.Thread(
            target=self._import_all, name="assay-warm-imports", daemon=True
        )
        with _running_lock:
            _running.add(thread)
        thread.start()

    def _import_all(self) -> None:
        try:
            for name in self.modules:
                try:
                    importlib.import_module(name)
                except Exception:  # the caller's own import raises it where it is seen
                    return
        finally:
            with _running_lock:
                _running.discard(threading.current_thread())

    def wait(self, timeout_s: float = WAIT_S) -> None:
        """Until the imports are done (or ``timeout_s`` passed); at once if never started."""
        if self._thread is not None:
            self._thread.join(timeout_s)
