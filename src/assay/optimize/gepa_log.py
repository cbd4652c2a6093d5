"""GEPA's log lines, written to ``run_dir/gepa.log`` and nowhere else.

GEPA's own ``Logger`` (its default when a ``run_dir`` is given) swaps ``sys.stdout`` and
``sys.stderr`` for the whole process while it runs, which garbles the terminal progress and
would capture another request's output in a server; without it GEPA prints every line. The
optimizer's progress is the typed events; GEPA's narrative goes to this file.
"""

from __future__ import annotations

import threading
from pathlib import Path


class FileLogger:
    """GEPA ``LoggerProtocol``: one line per message, appended (a resume continues it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def log(self, message: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(message.rstrip("\n") + "\n")
