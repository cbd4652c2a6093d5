"""``/api/optimizations`` over a real SQLite store arranged through the repository."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.store import Store
from assay.store.optimizations_repo import CandidateRecord


def _arrange(store: Store, optimization_id: str = "opt-abc123") -> None:
    repo = store.optimizations
    repo.create(
        optimization_id,
        name="terse",
        config={"seed": 3, "budget": {"max_metric_calls": 9}},
        run_dir="r",
    )
    repo.put_candidate(
        optimization_id,
        CandidateRecord(
            idx=0,
            candidate_hash="h0",
            components={"system": "Be nice."},
            parents=[],
            changed=[],
            iteration=0,
            val_score=0.25,
            created_at=1.0,
        ),
    )
    repo.put_candidate(
        optimization_id,
        CandidateRecord(
            idx=1,
            candidate_hash="h1",
            components={"system": "Be terse."},
            parents=[0],
            changed=["system"],
            iteration=2,
            val_score=0.75,
            created_at=2.0,
        ),
    )
    repo.add_evaluation(
        optimization_id,
        run_id=None,
        candidate_hash="h1",
        split="val",
        iteration=2,
        metric_calls=4,
        mean_score=0.75,
        cost_usd=0.5,
    )
    repo.add_evaluation(
        optimization_id,
        run_id=None,
        candidate_hash="h0",
        split="val",
        iteration=0,
        metric_calls=4,
        mean_score=0.25,
        cost_usd=None,
    )
    repo.update(optimization_id, status="completed", progress={"iteration": 2}, result={"best": 1})


def test_list_shows_stored_optimizations(client: TestClient, store: Store) -> None:
    assert client.get("/api/optimizations").json() == []
    _arrange(store)
    listed = client.get("/api/optimizations").json()
    assert [(o["id"], o["status"], o["progress"]) for o in listed] == [
        ("opt-abc123", "completed", {"iteration": 2})
    ]


def test_detail_has_lineage_scores_and_honest_cost(client: TestClient, store: Store) -> None:
    _arrange(store)
    response = client.get("/api/optimizations/opt-abc")  # a unique prefix works
    assert response.status_code == 200
    body = response.json()
    assert body["config"]["seed"] == 3
    assert body["result"] == {"best": 1}
    assert [(c["idx"], c["parents"], c["changed"], c["val_score"]) for c in body["candidates"]] == [
        (0, [], [], 0.25),
        (1, [0], ["system"], 0.75),
    ]
    assert sorted(e["candidate_idx"] for e in body["evaluations"]) == [0, 1]
    # the unpriced evaluation is counted, not read as free
    assert body["cost"] == {"cost_usd": 0.5, "unpriced_records": 1}


def test_unknown_optimization_is_404_naming_it(client: TestClient) -> None:
    response = client.get("/api/optimizations/nope")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]
