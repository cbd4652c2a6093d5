"""The live run of a monitor (or an ingest) for one period: created once, then reused.

Why a stable id (a hash of the name and the period key): every process of one monitor,
and every re-ingest of one name, lands on the same run without asking anyone, and its
unique ``(run, observation id)`` rows make the writes idempotent.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

from assay.runner.scorer_set import scorer_spec
from assay.scoring.scorer import Scorer
from assay.store.engine import Store
from assay.store.errors import RunExistsError
from assay.store.live_repo import LIVE_KEY
from assay.types import RunInfo, TargetSpec

PERIODS = {"hour": "%Y-%m-%dT%H", "day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m"}
"""How a live run's period key is written (UTC); ``"all"`` is one run for ever."""


def period_key(period: str, at: float) -> str:
    if period == "all":
        return "all"
    return time.strftime(PERIODS[period], time.gmtime(at))


def live_run_id(name: str, key: str) -> str:
    """The id of the live run of ``name`` for period ``key``."""
    return "live-" + hashlib.sha256(f"{name}\0{key}".encode()).hexdigest()[:24]


def open_live_run(
    store: Store,
    name: str,
    key: str,
    target: TargetSpec,
    scorers: Sequence[Scorer],
    *,
    concurrency: int,
) -> tuple[str, bool]:
    """The run's id, created when missing and marked running; True when it existed."""
    run_id = live_run_id(name, key)
    info = RunInfo(
        id=run_id,
        name=name,
        data_source=LIVE_KEY,
        target=target,
        scorers=[scorer_spec(s) for s in scorers],
        concurrency=concurrency,
        metadata={LIVE_KEY: {"monitor": name, "period": key}},
        created_at=time.time(),
    )
    existed = False
    try:
        store.runs.create(info)
    except RunExistsError:
        existed = True
    store.runs.mark_started(run_id)
    return run_id, existed
