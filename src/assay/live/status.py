"""``live_status``: what a monitor did, read back from its stored live runs.

Read from the store rather than from the process, so it works after the process exited
and sums every process of the monitor (the counters are added per write, see
``assay.store.live_repo``).
"""

from __future__ import annotations

from typing import Any

from assay.live.fate import totals
from assay.store.engine import Store


class LiveRunNotFoundError(LookupError):
    """No live run is stored under this monitor name."""

    def __str__(self) -> str:
        return str(self.args[0])


def live_status(store: Store, name: str, *, recent: int = 10) -> dict[str, Any]:
    """Rates, counts, budget used and the latest scores of monitor ``name``'s newest run."""
    run_ids = store.live.run_ids(name)
    if not run_ids:
        raise LiveRunNotFoundError(f"no live run of monitor {name!r} in this store")
    run_id = run_ids[0]
    record = store.runs.get(run_id)
    state = store.live.state(run_id)
    counts = totals(state.get("counts") or {})
    sampled_rate = counts["sampled"] / counts["eligible"] if counts["eligible"] else None
    stored = record.completed_results
    latest = []
    for result in store.runs.results(run_id, offset=max(0, stored - recent)):
        latest.append(
            {
                "id": result.item_id,
                "at": result.started_at,
                "scores": {k: v.score for k, v in result.scores.items()},
                "status": {k: v.status for k, v in result.scores.items()},
                "warnings": result.warnings,
            }
        )
    return {
        "name": name,
        "run_id": run_id,
        "period": state.get("period") or (record.info.metadata.get("live") or {}).get("period"),
        "runs": len(run_ids),
        "status": record.status,
        "rate": state.get("rate"),
        "observed_sample_rate": sampled_rate,
        "counts": counts,
        "stored_results": stored,
        "budget": state.get("budget"),
        "scorers": state.get("scorers"),
        "updated_at": state.get("updated_at"),
        "recent": latest,
    }
