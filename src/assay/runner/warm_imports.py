"""The modules a run needs only at its end, imported in a thread while its calls wait.

Why: a short judge run spends most of its wall time waiting on model calls, with the event
loop idle (and the GIL free) between answers, while its start-up is on the critical path of
the first request. numpy and the summary statistics (``summary.source``, ``summary.stats``:
about 0.1-0.3 s of CPU) are needed only when the summary is made. Imported before the
first request they delay every call of the run; imported here, once the run's first
requests are on their way, they take turns with the loop while it waits, and the summary
finds them loaded. Nothing changes in what is imported or computed, only when.

A module already imported (a second run in the same process) is not imported again, and no
thread starts when there is nothing to import. The thread only imports and ends; ``wait``
joins it (with a timeout) before the summary imports the same modules itself, so the two
threads never race through one module's initialisation. An import that fails in the thread
is left for the summary's own import to raise, in the run's thread, with its traceback.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Sequence

END_OF_RUN_MODULES: tuple[str, ...] = ("numpy", "assay.summary.source", "assay.summary.stats")
"""What ``SummaryAccumulator.summary`` imports (with ``numpy`` first: the largest part)."""

WAIT_S = 60.0
"""How long ``wait`` waits for the imports: far above their cost (well under a second), a
bound so that a stuck import cannot hang a run's end for ever."""


class ImportWarmer:
    """Imports ``modules`` (those not imported yet) in one daemon thread, from ``start``."""

    def __init__(self, modules: Sequence[str] = END_OF_RUN_MODULES) -> None:
        self.modules = tuple(name for name in modules if name not in sys.modules)
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start importing (once; nothing to do: no thread)."""
        if self._thread is not None or not self.modules:
            return
        self._thread = threading.Thread(
            target=self._import_all, name="assay-warm-imports", daemon=True
        )
        self._thread.start()

    def _import_all(self) -> None:
        for name in self.modules:
            try:
                importlib.import_module(name)
            except Exception:  # the summary's own import raises it where it is seen
                return

    def wait(self, timeout_s: float = WAIT_S) -> None:
        """Until the imports are done (or ``timeout_s`` passed); at once if never started."""
        if self._thread is not None:
            self._thread.join(timeout_s)
