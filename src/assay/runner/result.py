"""What a run entry point returns: the run's ``RunRecord`` plus (in memory) its results.

``RunRecord`` (``assay.types``) is a run as the store keeps it: description, status, counts,
summary. ``RunResult`` is that record as a run just returned it, plus the ``ItemResult``
list of an in-memory run; every report and comparison takes the record
(``result.record``), so an in-memory run and a stored one go through the same code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.types import ItemResult, RunInfo, RunRecord, RunStatus, RunSummary


@dataclass(frozen=True)
class RunResult:
    """A finished run. ``results`` is filled for in-memory runs (ordered by item then
    repeat); a stored run's results stay in the database (``store.runs.results(run.id)``).
    """

    record: RunRecord
    results: list[ItemResult] = field(default_factory=list)

    @classmethod
    def finished(
        cls,
        info: RunInfo,
        status: RunStatus,
        summary: RunSummary,
        results: Iterable[ItemResult] = (),
    ) -> RunResult:
        """The result of a run that ended with ``status`` and ``summary``."""
        record = RunRecord(
            info=info,
            status=status,
            completed_results=summary.results,
            failed_results=summary.item_errors,
            summary=summary,
        )
        return cls(record=record, results=list(results))

    @property
    def id(self) -> str:
        return self.record.info.id

    @property
    def info(self) -> RunInfo:
        return self.record.info

    @property
    def status(self) -> RunStatus:
        return self.record.status

    @property
    def summary(self) -> RunSummary:
        """The run's summary (a finished run always has one)."""
        return self.record.summary or RunSummary()

    @property
    def scores(self) -> dict[str, float | None]:
        """Mean score per scorer id (``None`` when a scorer produced no number)."""
        return {key: s.mean for key, s in self.summary.scorers.items()}
