"""The optimizations repository on both databases: rows, upserted candidates, prefixes."""

from __future__ import annotations

import pytest

from assay.store import Store, codec, optimizations_repo
from assay.store.optimizations_repo import CandidateRecord, OptimizationNotFoundError
from assay.store.runs_repo import new_lease_owner


def _candidate(idx: int, text: str, iteration: int) -> CandidateRecord:
    return CandidateRecord(
        idx=idx,
        candidate_hash=f"h{text}",
        components={"system": text},
        parents=[] if idx == 0 else [0],
        changed=[] if idx == 0 else ["system"],
        iteration=iteration,
        val_score=0.5,
        created_at=1.0,
    )


def test_an_optimization_round_trips(store: Store) -> None:
    repo = store.optimizations
    created = repo.create("abc123", name="n", config={"seed": 1}, run_dir="/tmp/x")
    assert (created.status, created.progress, created.result) == ("running", {}, None)
    repo.update("abc123", progress={"metric_calls": 7})
    repo.update("abc123", status="completed", result={"best_idx": 1})
    got = repo.get("abc")
    assert (got.status, got.progress, got.result) == (
        "completed",
        {"metric_calls": 7},
        {"best_idx": 1},
    )
    assert [o.id for o in repo.list()] == ["abc123"]
    with pytest.raises(OptimizationNotFoundError, match="'zzz' not found"):
        repo.get("zzz")
    with pytest.raises(OptimizationNotFoundError):
        repo.update("zzz", status="failed")


def test_a_prefix_matching_two_optimizations_is_refused(store: Store) -> None:
    for key in ("ab1", "ab2"):
        store.optimizations.create(key, name=None, config={}, run_dir="/tmp")
    with pytest.raises(OptimizationNotFoundError, match="matches 2 optimizations"):
        store.optimizations.get("ab")


def test_a_re_proposed_candidate_replaces_the_lost_one(store: Store) -> None:
    repo = store.optimizations
    repo.create("o1", name=None, config={}, run_dir="/tmp")
    repo.put_candidate("o1", _candidate(0, "seed", 0))
    repo.put_candidate("o1", _candidate(1, "lost", 3))
    repo.put_candidate("o1", _candidate(1, "after resume", 3))
    candidates = repo.candidates("o1")
    assert [(c.idx, c.components["system"]) for c in candidates] == [
        (0, "seed"),
        (1, "after resume"),
    ]


def test_evaluations_and_reflections_are_kept_in_order(store: Store) -> None:
    repo = store.optimizations
    repo.create("o2", name=None, config={}, run_dir="/tmp")
    for split in ("val", "train"):
        repo.add_evaluation(
            "o2",
            run_id=None,
            candidate_hash="h",
            split=split,
            iteration=1,
            metric_calls=3,
            mean_score=0.5,
            cost_usd=0.0,
        )
    repo.add_reflection(
        "o2",
        iteration=1,
        component="system",
        prompt="p",
        answer=None,
        error="boom",
        cost_usd=None,
    )
    assert [e.split for e in repo.evaluations("o2")] == ["val", "train"]
    [reflection] = repo.reflections("o2")
    assert (reflection.prompt, reflection.answer, reflection.error) == ("p", None, "boom")


def test_a_killed_optimization_reads_as_interrupted(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Marked running, nobody holds its lease, not written to for a while: killed (issue 20:
    it showed ``running`` for ever); a fresh one, or one whose process holds the lease, is
    still running."""
    repo = store.optimizations
    repo.create("dead01", name=None, config={}, run_dir="/tmp/x")
    repo.create("live01", name=None, config={}, run_dir="/tmp/y")
    repo.update("dead01", progress={"lease_owner": "gone", "lease_expires_at": 1.0})
    later = codec.now() + 3600.0
    repo.update("live01", progress={"lease_owner": new_lease_owner(), "lease_expires_at": later})
    assert repo.get("dead01").status == "running"  # just written: a starting process
    monkeypatch.setattr(optimizations_repo, "now", lambda: codec.now() + 60.0)
    assert repo.get("dead01").status == "interrupted"
    assert repo.get("live01").status == "running"
    assert {o.id: o.status for o in repo.list()} == {"dead01": "interrupted", "live01": "running"}
