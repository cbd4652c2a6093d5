"""Targets the Ray backend tests ship to workers: a module of its own, importable by name
(``tests.operations.ray_targets:slow_upper``) from a CLI driver in a subprocess and from
the Ray workers, whose ``PYTHONPATH`` names the repository."""

from __future__ import annotations

import time


def upper(input: str) -> str:
    """The trivial target: what a code scorer compares with ``expected_output``."""
    return input.upper()


def slow_upper(input: str) -> str:
    """``upper`` after 50 ms, so a run lasts long enough to kill a process in its middle."""
    time.sleep(0.05)
    return input.upper()
