"""What happened to each observation, counted so the totals add up.

Only final fates are counted (an observation is counted once, when its fate is known);
the totals are derived from them, so at every moment
``observed = filtered_out + filter_error + eligible``,
``eligible = sampled + not_sampled`` and
``sampled = scored + duplicate + dropped + failed`` (``duplicate``: an observation whose id
the live run already had, e.g. a retried request; stored once), with
nothing "pending" hidden in between: an observation still being scored is counted nowhere
yet (``in_flight`` in a monitor's snapshot).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

FINAL = ("filtered_out", "filter_error", "not_sampled", "scored", "duplicate")
"""Plain final fates; ``dropped`` and ``failed`` are broken down by reason."""


class FateCounts:
    """Thread-safe counters of final fates, with a delta since the last ``take_delta``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total: dict[str, Any] = {}
        self._delta: dict[str, Any] = {}

    def add(self, fate: str, reason: str | None = None, n: int = 1, *, delta: bool = True) -> None:
        """Count ``n`` observations ending as ``fate`` (``dropped``/``failed`` take a reason);
        ``delta=False``: already stored, only the in-process totals change."""
        with self._lock:
            buckets = (self._total, self._delta) if delta else (self._total,)
            for bucket in buckets:
                if reason is None:
                    bucket[fate] = bucket.get(fate, 0) + n
                else:
                    sub = bucket.setdefault(fate, {})
                    sub[reason] = sub.get(reason, 0) + n

    def take_delta(self) -> dict[str, Any]:
        """What was counted since the last call (then forgotten here)."""
        with self._lock:
            delta, self._delta = self._delta, {}
        return delta

    def give_back(self, delta: Mapping[str, Any]) -> None:
        """A delta that could not be stored, to be sent with the next one."""
        with self._lock:
            for fate, value in delta.items():
                if isinstance(value, Mapping):
                    sub = self._delta.setdefault(fate, {})
                    for reason, n in value.items():
                        sub[reason] = sub.get(reason, 0) + n
                else:
                    self._delta[fate] = self._delta.get(fate, 0) + value

    def totals(self) -> dict[str, Any]:
        with self._lock:
            return totals(self._total)


def totals(counts: Mapping[str, Any]) -> dict[str, Any]:
    """The final fates plus the derived sums (``observed``, ``eligible``, ``sampled``)."""
    dropped = {str(k): int(v) for k, v in (counts.get("dropped") or {}).items()}
    failed = {str(k): int(v) for k, v in (counts.get("failed") or {}).items()}
    plain = {name: int(counts.get(name) or 0) for name in FINAL}
    sampled = plain["scored"] + plain["duplicate"] + sum(dropped.values()) + sum(failed.values())
    eligible = sampled + plain["not_sampled"]
    return {
        "observed": eligible + plain["filtered_out"] + plain["filter_error"],
        "eligible": eligible,
        "sampled": sampled,
        **plain,
        "dropped": dropped,
        "failed": failed,
    }
