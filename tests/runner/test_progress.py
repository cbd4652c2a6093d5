"""The progress bar's rate is completed results over elapsed time, not Rich's burst speed."""

from __future__ import annotations

import pytest
from rich.progress import Progress

from assay.runner.progress import session_rate


def test_rate_is_completed_over_elapsed_even_when_workers_finish_together() -> None:
    clock = [0.0]
    progress = Progress(get_time=lambda: clock[0], disable=True)
    task_id = progress.add_task("run", total=100, skipped=0)
    for t in (1.0, 1.0001, 1.0002):  # three concurrent 1-second items finish together
        clock[0] = t
        progress.advance(task_id)
    task = progress.tasks[0]
    assert task.speed is not None and task.speed > 1000  # what the bar used to show
    assert session_rate(task) == pytest.approx(3 / 1.0002)


def test_results_of_an_earlier_session_do_not_count_towards_the_rate() -> None:
    clock = [0.0]
    progress = Progress(get_time=lambda: clock[0], disable=True)
    task_id = progress.add_task("run", total=100, skipped=0)
    progress.reset(task_id, completed=60, skipped=60)
    assert session_rate(progress.tasks[0]) is None
    clock[0] = 4.0
    progress.advance(task_id, 2)
    assert session_rate(progress.tasks[0]) == pytest.approx(0.5)
