"""Targets the Ray backend tests ship to workers: a module of its own, importable by name
(``tests.operations.ray_targets:slow_upper``) from a CLI driver in a subprocess and from
the Ray workers, whose ``PYTHONPATH`` names the repository."""

from __future__ import annotations

import os
import time


def upper(input: str) -> str:
    """The trivial target: what a code scorer compares with ``expected_output``."""
    return input.upper()


def slow_upper(input: str) -> str:
    """``upper`` after 50 ms, so a run lasts long enough to kill a process in its middle."""
    time.sleep(0.05)
    return input.upper()


def exit_on_poison(input: str) -> str:
    """``upper``, except that the item ``poison`` ends the process scoring it at once (no
    exception, no cleanup: what a crash in native code or the OOM killer does)."""
    if input == "poison":
        os._exit(3)
    return input.upper()
