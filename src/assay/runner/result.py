"""What ``run_evals`` returns: the run's description, status, summary and (in memory) results."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.types import ItemResult, RunInfo, RunRecord, RunStatus, RunSummary


@dataclass(frozen=True)
class RunResult:
    """A finished run. ``results`` is filled for in-memory runs (ordered by item then repeat);
    a stored run's results stay in the database (``store.runs.results(run.id)``)."""

    info: RunInfo
    status: RunStatus
    summary: RunSummary
    results: list[ItemResult] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def scores(self) -> dict[str, float | None]:
        """Mean score per scorer id (``None`` when a scorer produced no number)."""
        return {key: s.mean for key, s in self.summary.scorers.items()}

    def record(self) -> RunRecord:
        """As a ``RunRecord``, the shape reports and comparisons take."""
        return RunRecord(
            info=self.info,
            status=self.status,
            completed_results=self.summary.results,
            failed_results=self.summary.item_errors,
            summary=self.summary,
        )

    def __rich__(self) -> object:
        from assay.analysis.report_terminal import summary_table

        return summary_table(self.record())
