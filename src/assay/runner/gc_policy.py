"""Keep CPython's cyclic garbage collector off the results an in-memory run keeps.

Why: an in-memory run (``run_evals``) keeps every ``ItemResult`` until it returns, about
nine objects the collector tracks per result (the result, its scores, their dicts, sets and
lists) on top of the loaded items. CPython runs a full (generation-2) collection whenever
the objects that survived into the oldest generation grew by a quarter, and each one walks
everything alive: for a run that only adds objects, that is a walk of the whole run, over
and over. In a 20,000-item run of a zero-latency target the full collections cost about
12 µs per item, a fifth of the runner's time, and they find nothing: the results are alive
on purpose.

What: ``KeptResults`` is used by the engine when the run opted in
(``RunOptions(gc_freeze=True)``) and the sink keeps what it is given (``keeps_results`` on
the sink, true for ``MemorySink``). Opt-in, because the collector is the host process's: a
library run inside a notebook or a server must not change it unasked. Every ``CHECKPOINT``
kept results it runs a full collection and then ``gc.freeze()``: what is alive moves to the
permanent generation, which later collections skip, so each kept object is walked about once
instead of at every full collection. The collection before each freeze means no garbage is
frozen; it walks only what is not frozen yet (mostly the results since the previous
checkpoint), and the very first one of a process walks its whole heap once, as the collector
itself would early in the run. When the run ends (however it ends) ``gc.unfreeze()`` puts
every frozen object back in the oldest generation, where collections see it as before.

What it does not change: reference counting frees everything as usual (a frozen object that
dies is freed at once); collections of the young generations still run; a cycle that becomes
garbage while frozen (an object alive at a checkpoint that dies later as part of a cycle) is
collected after the run instead of during it.

Concurrent and nested runs in one process: the freeze is process-wide, so the state is
shared and counted. Any run's checkpoint freezes what every run keeps; when a run ends it
unfreezes everything (so nothing stays frozen longer than the run that froze it) and the
runs still going freeze their results again at their next checkpoint, after a collection
that then walks the heap once.

Left alone: a process whose collector is disabled (``gc.disable()``), and a process that
froze objects itself (``gc.get_freeze_count()`` non-zero before any run of ours froze),
whose frozen objects a run's ``gc.unfreeze()`` would otherwise release. Runs that did not
opt in (the default) never touch the collector.
"""

from __future__ import annotations

import gc
import threading
from typing import Final

CHECKPOINT: Final = 2000
"""Kept results between two collect-and-freeze steps. Each step walks what was kept since
the previous one, so the total work does not depend on this; it only bounds how much is
walked by the collector's own full collections in between."""

_lock = threading.RLock()
"""Reentrant: ``gc.collect()`` runs finalizers, and a finalized run coroutine releases its
policy (in the engine's ``finally``) on the thread that holds the lock."""
_holders = 0
"""Runs of this process currently holding frozen objects."""


class KeptResults:
    """The policy of one run: ``kept()`` per result kept, ``release()`` when the run ends.

    ``release`` is idempotent and must run in a ``finally``: it is what gives the frozen
    objects back to the collector.
    """

    def __init__(self, *, enabled: bool = True, checkpoint: int | None = None) -> None:
        checkpoint = CHECKPOINT if checkpoint is None else checkpoint
        if checkpoint < 1:
            raise ValueError("checkpoint must be at least 1")
        self.enabled = enabled
        self.checkpoint = checkpoint
        self.freezes = 0
        """Collect-and-freeze steps taken by this run (for tests and diagnostics)."""
        self._since = 0
        self._holding = False

    def kept(self) -> None:
        """Count one kept result; every ``checkpoint`` results, collect and freeze."""
        self._since += 1
        if self._since >= self.checkpoint:
            self._since = 0
            if self.enabled:
                self._freeze()

    def _freeze(self) -> None:
        global _holders
        with _lock:
            if not gc.isenabled():
                return
            if not self._holding:
                if _holders == 0 and gc.get_freeze_count():
                    self.enabled = False  # the process froze objects itself: leave them
                    return
                _holders += 1
                self._holding = True
            gc.collect()
            gc.freeze()
            self.freezes += 1

    def release(self) -> None:
        """Give every frozen object back to the collector (once; safe to call again)."""
        global _holders
        with _lock:
            if not self._holding:
                return
            self._holding = False
            _holders -= 1
            gc.unfreeze()
