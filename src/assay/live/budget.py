"""A judge budget per time window: past it, nothing is scored until the next window.

Why windows aligned on the epoch (an hourly window starts on the hour, UTC): every process
of one monitor agrees on the current window, and a restart inside a window continues its
spending (loaded from the live run) instead of starting a fresh budget.

Why the check uses the cost of the next observation, estimated as the mean cost per scored
observation so far in the window: a judge call cannot be priced before it is made, so the
budget refuses the call that would probably cross it rather than the one after it.
"""

from __future__ import annotations

import threading

WINDOWS = {"minute": 60.0, "hour": 3600.0, "day": 86400.0, "week": 604800.0}


def window_seconds(window: str | float) -> float:
    """``"hour"``/``"day"``/... or a number of seconds, as seconds (> 0)."""
    if isinstance(window, str):
        try:
            return WINDOWS[window]
        except KeyError:
            raise ValueError(
                f"budget_window: expected one of {sorted(WINDOWS)} or seconds, got {window!r}"
            ) from None
    seconds = float(window)
    if not seconds > 0:
        raise ValueError(f"budget_window: must be > 0 seconds, got {window!r}")
    return seconds


class Budget:
    """Money spent on judges in the current window against ``limit_usd`` (None: no limit)."""

    def __init__(self, limit_usd: float | None, window: str | float = "day") -> None:
        if limit_usd is not None and not limit_usd >= 0:
            raise ValueError(f"budget_usd: must be >= 0, got {limit_usd!r}")
        self.limit_usd = limit_usd
        self.window_s = window_seconds(window)
        self.window_start = 0.0
        self.spent_usd = 0.0
        self.scored = 0
        self._lock = threading.Lock()

    def _roll(self, now: float) -> None:
        start = (now // self.window_s) * self.window_s
        if start != self.window_start:
            self.window_start = start
            self.spent_usd = 0.0
            self.scored = 0

    def resume(self, window_start: float, spent_usd: float, scored: int, now: float) -> None:
        """Continue a window a previous process (or run) already spent in."""
        with self._lock:
            self._roll(now)
            if window_start == self.window_start:
                self.spent_usd += spent_usd
                self.scored += scored

    def allows(self, now: float) -> bool:
        """Whether one more observation may be scored now."""
        with self._lock:
            self._roll(now)
            if self.limit_usd is None:
                return True
            estimate = self.spent_usd / self.scored if self.scored else 0.0
            return self.spent_usd < self.limit_usd and self.spent_usd + estimate <= self.limit_usd

    def spend(self, cost_usd: float, now: float) -> None:
        """Record what one scored observation cost."""
        with self._lock:
            self._roll(now)
            self.spent_usd += cost_usd
            self.scored += 1

    def snapshot(self) -> dict[str, float | int | None]:
        with self._lock:
            return {
                "limit_usd": self.limit_usd,
                "window_s": self.window_s,
                "window_start": self.window_start,
                "spent_usd": self.spent_usd,
                "scored": self.scored,
            }
