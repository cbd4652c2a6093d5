"""The run's progress bar: done/total, rate and ETA on stderr (Rich, imported only when the
bar is shown: ``runner/progress_bar.py``).

Off when stderr is not a terminal unless asked for, so logs and CI output stay clean.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, Task, TaskID


def session_rate(task: Task) -> float | None:
    """Items per second of this session: results completed since the bar started over the
    time elapsed. Rich's own ``speed`` averages the gaps between recent updates, which with
    concurrent workers finishing together briefly reports thousands of items per second for
    a target that takes a second per item."""
    elapsed = task.elapsed
    done = task.completed - float(task.fields.get("skipped", 0))
    if not elapsed or elapsed <= 0 or done <= 0:
        return None
    return done / elapsed


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
            from assay.runner.progress_bar import run_progress_bar

            self._progress = run_progress_bar()
            self._progress.__enter__()
            self._task = self._progress.add_task(
                self._description, total=self._total, errors=0, skipped=0
            )
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
            self._progress.reset(self._task, completed=done, skipped=done)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
