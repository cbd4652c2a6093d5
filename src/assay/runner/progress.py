"""The run's progress bar: done/total, rate and ETA on stderr (Rich).

Off when stderr is not a terminal unless asked for, so logs and CI output stay clean.
"""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- items/s" if speed is None else f"{speed:,.1f} items/s", style="cyan")


class RunProgress:
    """Context manager around a Rich progress bar; a no-op when disabled."""

    def __init__(self, description: str, total: int | None, *, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._description = description
        self._total = total
        self.errors = 0

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                RateColumn(),
                TextColumn("errors {task.fields[errors]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                refresh_per_second=8,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(self._description, total=self._total, errors=0)
        return self

    def advance(self, done: int = 1, *, error: bool = False) -> None:
        if self._progress is None or self._task is None:
            return
        if error:
            self.errors += 1
            self._progress.update(self._task, advance=done, errors=self.errors)
        else:
            self._progress.advance(self._task, done)

    def skip(self, done: int) -> None:
        """Count results finished by an earlier session (resume) without skewing the rate."""
        if self._progress is not None and self._task is not None and done:
            self._progress.update(self._task, completed=done)
            self._progress.reset(self._task, completed=done)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
