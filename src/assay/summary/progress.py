"""How far a stored run got, said the same way everywhere ("14 of 200").

A run that is still going, was interrupted or failed holds fewer results than it set out
to; a reviewer reading its score has to see that before trusting it. The web pages (run,
runs list, compare) and the CLI (``runs list``/``show``) all call ``run_progress`` so the
count, the total and the wording never disagree between them.
"""

from __future__ import annotations

from typing import NamedTuple

from assay.types import RunRecord


class RunProgress(NamedTuple):
    """``done`` of ``expected`` results (items × repeats; ``None`` when the run never knew
    its size, e.g. a live monitor); ``partial`` when the run is not a finished whole."""

    done: int
    expected: int | None
    partial: bool

    @property
    def text(self) -> str:
        """``"14 of 200"``, or ``"14"`` when the size is unknown."""
        if self.expected is None:
            return f"{self.done:,}"
        return f"{self.done:,} of {self.expected:,}"


def run_progress(record: RunRecord) -> RunProgress:
    """The results ``record`` holds against the results it was to produce. Partial: not
    ``completed``, or completed with fewer results than planned (``--limit`` runs record
    the limited size, so they are whole)."""
    total = record.info.total_items
    expected = None if total is None else total * max(record.info.repeats, 1)
    done = record.completed_results
    short = expected is not None and done < expected
    return RunProgress(done, expected, record.status != "completed" or short)
