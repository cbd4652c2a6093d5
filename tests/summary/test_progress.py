"""``run_progress``: how much of its planned work a stored run holds."""

from __future__ import annotations

import pytest

from assay.summary.progress import run_progress
from assay.types import RunInfo, RunRecord, RunStatus, TargetSpec


def _record(status: RunStatus, done: int, total: int | None, repeats: int = 1) -> RunRecord:
    info = RunInfo(
        id="r",
        target=TargetSpec(kind="stored-output", label="stored"),
        total_items=total,
        repeats=repeats,
    )
    return RunRecord(info=info, status=status, completed_results=done)


@pytest.mark.parametrize(
    ("status", "done", "total", "repeats", "text", "partial"),
    [
        ("interrupted", 14, 200, 1, "14 of 200", True),
        ("running", 0, 100, 2, "0 of 200", True),
        ("failed", 3, 3, 1, "3 of 3", True),
        ("completed", 200, 200, 1, "200 of 200", False),
        ("completed", 199, 200, 1, "199 of 200", True),
        ("completed", 12_345, 20_000, 1, "12,345 of 20,000", True),
        ("running", 7, None, 1, "7", True),
        ("completed", 7, None, 1, "7", False),
    ],
)
def test_progress_text_and_partial(
    status: RunStatus, done: int, total: int | None, repeats: int, text: str, partial: bool
) -> None:
    progress = run_progress(_record(status, done, total, repeats))
    assert (progress.text, progress.partial) == (text, partial)
