"""Where a run's results go. The runner only knows this protocol, not the store.

A sink receives the run description once, every finished item result (an item result and
its scores belong together: a sink must write them atomically), and the final status. The
in-memory sink keeps results; the store's sink writes them to the database in batches.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Protocol

from assay.types import ItemResult, RunInfo, RunStatus, RunSummary


class ResultSink(Protocol):
    """Receives a run's results as they complete."""

    async def start(self, info: RunInfo, *, resumed: bool) -> None:
        """Called before the first item; ``resumed`` when continuing an interrupted run."""

    async def write(self, result: ItemResult) -> None:
        """Record one finished item result with its scores (atomically)."""

    async def finish(self, run_id: str, status: RunStatus, summary: RunSummary) -> None:
        """Flush everything and record the final status and summary."""


class MemorySink:
    """Keeps every result in a list: ``run_evals``'s default."""

    keeps_results = True
    """Read by the engine (an optional attribute of any sink): a sink that keeps every
    result it is given lets the run keep the garbage collector off them
    (``assay.runner.gc_policy``)."""

    def __init__(self) -> None:
        self.info: RunInfo | None = None
        self.results: list[ItemResult] = []
        self.status: RunStatus = "pending"
        self.summary: RunSummary | None = None

    async def start(self, info: RunInfo, *, resumed: bool) -> None:
        self.info = info
        self.status = "running"

    async def write(self, result: ItemResult) -> None:
        self.results.append(result)

    async def finish(self, run_id: str, status: RunStatus, summary: RunSummary) -> None:
        self.status = status
        self.summary = summary

    def ordered(self) -> list[ItemResult]:
        """The results by item position, then repeat (they finish in any order)."""
        return sorted(self.results, key=_ORDER)


_ORDER = attrgetter("position", "repeat")
