"""The Rich parts of the run's progress bar: its columns and the ``Progress`` it builds.

Apart from ``runner/progress.py`` so that a run without a bar (``progress=False``, or
stderr not a terminal) never imports Rich: about 0.05–0.1 s of a short run's start-up.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from assay.runner.progress import session_rate


class RateColumn(ProgressColumn):
    """Items per second (completed over elapsed, this session)."""

    def render(self, task: Task) -> Text:
        speed = session_rate(task)
        return Text("-- items/s" if speed is None else f"{speed:,.1f} items/s", style="cyan")


class RemainingColumn(ProgressColumn):
    """Estimated time left, from the same completed-over-elapsed rate."""

    def render(self, task: Task) -> Text:
        speed = session_rate(task)
        if speed is None or task.total is None:
            return Text("-:--:--", style="progress.remaining")
        seconds = int(max(0.0, task.total - task.completed) / speed)
        hours, rest = divmod(seconds, 3600)
        return Text(f"{hours}:{rest // 60:02d}:{rest % 60:02d}", style="progress.remaining")


def run_progress_bar() -> Progress:
    """The bar on stderr: spinner, description, bar, done/total, rate, errors, elapsed, ETA."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        RemainingColumn(),
        console=Console(stderr=True),
        refresh_per_second=8,
    )
