"""``optimize.feed``: what a watcher reads from the store, for an optimization run here with
scripted task and reflection models on a real SQLite store."""

from __future__ import annotations

import time
from typing import Any

import pytest

from assay.optimize import feed, optimize
from assay.optimize.events import CandidateKept, OptimizeEvent
from assay.optimize.feed import FeedReader, checkpoints, current_state, stale_reason
from assay.store import Store
from assay.testing import ScriptedModel

from .conftest import TERSE_RULE, reflection_reply, task_reply


def _optimize(config: dict[str, Any], store: Store, events: list[OptimizeEvent]) -> Any:
    return optimize(
        config,
        task_model=ScriptedModel(responder=task_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
        on_event=events.append,
    )


def test_a_finished_optimization_reads_as_its_whole_story(
    base_config: dict[str, Any], store: Store
) -> None:
    emitted: list[OptimizeEvent] = []
    result = _optimize(base_config, store, emitted)
    reader = FeedReader(store, result.optimization_id[:8])  # a prefix works
    events = reader.poll()
    names = [name for name, _ in events]
    assert names[0] == "status" and names[-1] == "result" and reader.done
    assert names.index("scoreboard") < names.index("result")
    assert reader.poll() == []  # over: nothing more

    # the checkpoints are the optimizer's own CandidateKept events, rebuilt from the store
    kept = [e for e in emitted if isinstance(e, CandidateKept)]
    assert [e for name, e in events if name == "checkpoint"] == kept
    assert kept[-1].is_best and TERSE_RULE in kept[-1].components["instructions"]

    status = events[0][1]
    assert status.model_dump() | {"elapsed_s": 0} == {
        "optimization_id": result.optimization_id,
        "state": "completed",
        "iteration": result.iterations,
        "max_iterations": None,
        "metric_calls": result.metric_calls,
        "max_metric_calls": 40,
        "cost_usd": 0.0,
        "max_cost_usd": None,
        "elapsed_s": 0,
        "max_wall_time_s": None,
        "best_idx": 1,
        "best_val_score": 1.0,
        "seed_val_score": 0.0,
        "candidates": 2,
    }
    # one log line per stored evaluation and reflection, in the order they were stored
    logs = [e.message for name, e in events if name == "log"]
    assert logs[0].startswith("candidate 0 evaluated on val (4 rows): mean score 0.000")
    assert "the reflection model proposed a new 'instructions'" in logs
    assert logs[-1].startswith("candidate 1 evaluated on test (6 rows): mean score 1.000")

    # the scoreboard: candidate 1 on every validation row and its train minibatch
    [board] = [e for name, e in events if name == "scoreboard"]
    assert board.candidate_idx == 1 and [s.id for s in board.scorers] == ["exact-match"]
    assert [r.item_id for r in board.rows if r.split == "val"] == ["q10", "q11", "q12", "q13"]
    assert sum(r.split == "train" for r in board.rows) == 3
    assert all(r.score == 1.0 and r.scorers["exact-match"].normalized == 1.0 for r in board.rows)

    result_event = events[-1][1]
    assert result_event.result == result and TERSE_RULE in result_event.best_prompt
    assert current_state(store, result.optimization_id) == (status, board)


def test_a_failed_optimization_ends_with_an_error(
    base_config: dict[str, Any], store: Store
) -> None:
    def watcher_breaks(event: OptimizeEvent) -> None:
        if event.kind == "candidate":
            raise RuntimeError("the watcher broke")

    with pytest.raises(RuntimeError, match="the watcher broke"):
        optimize(
            base_config,
            task_model=ScriptedModel(responder=task_reply),
            reflection_model=ScriptedModel(responder=reflection_reply),
            store=store,
            on_event=watcher_breaks,
        )
    [record] = store.optimizations.list()
    events = FeedReader(store, record.id).poll()
    assert events[0][0] == "status"
    name, error = events[-1]
    assert name == "error" and error.state == record.status == "failed"
    assert "the watcher broke" in error.message


def test_stale_running_optimizations(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.optimizations.create("opt-x", name=None, config={}, run_dir="r")
    fresh = store.optimizations.get("opt-x")
    assert stale_reason(fresh, live_here=False) is None  # just created: given time
    monkeypatch.setattr(feed, "STALE_AFTER_S", 0.0)
    time.sleep(0.01)
    assert "no live process" in (stale_reason(fresh, live_here=False) or "")
    assert stale_reason(fresh, live_here=True) is None
    lease = {"lease_owner": "elsewhere:1:x", "lease_expires_at": time.time() + 60}
    store.optimizations.update("opt-x", progress=lease)
    held = store.optimizations.get("opt-x")
    assert stale_reason(held, live_here=False) is None  # another host's live lease
    reader = FeedReader(store, "opt-x")
    assert [name for name, _ in reader.poll()] == ["status"] and not reader.done


def test_checkpoints_mark_each_new_best_once() -> None:
    from assay.store.optimizations_repo import CandidateRecord

    def record(idx: int, score: float | None) -> CandidateRecord:
        parents = [0] if idx else []
        return CandidateRecord(
            idx=idx, candidate_hash=f"h{idx}", components={"s": str(idx)}, parents=parents,
            changed=["s"] if idx else [], iteration=idx, val_score=score, created_at=0.0,
        )  # fmt: skip

    kept = checkpoints("o", [record(2, 0.5), record(0, 0.5), record(1, 0.7), record(3, 0.7)])
    assert [(k.idx, k.is_best, k.best_val_score) for k in kept] == [
        (0, True, 0.5),
        (1, True, 0.7),
        (2, False, 0.7),
        (3, False, 0.7),  # a tie is not a new best, as in the optimizer
    ]
