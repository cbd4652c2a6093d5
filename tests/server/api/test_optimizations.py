"""``/api/optimizations`` over a real SQLite store: stored optimizations arranged through the
repository, and live ones started with ``POST /api/optimize`` against the mock OpenAI server
on loopback (task and reflection model over real HTTP, code scorers), followed to the end
through their Server-Sent Events."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.optimize import feed
from assay.server.app import create_app
from assay.store import Store
from assay.store.optimizations_repo import CandidateRecord
from assay.testing.openai_server import MockOpenAIServer
from tests.server.api.conftest import LOCAL, sse_events
from tests.server.optimize_mock import TERSE_RULE, optimize_body, responder, rows


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


# ---------------------------------------------------------------- live optimizations


@pytest.fixture(autouse=True)
def _server_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No base-URL allow list or data folder from the developer's environment."""
    monkeypatch.delenv("ASSAY_SERVER_ALLOWED_BASE_URLS", raising=False)
    monkeypatch.delenv("ASSAY_SERVER_DATA_DIR", raising=False)


@pytest.fixture
def mock() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(responder=responder) as server:
        yield server


def _start(client: TestClient, body: dict[str, Any]) -> str:
    answer = client.post("/api/optimize", json=body)
    assert answer.status_code == 202, answer.text
    started = answer.json()
    optimization_id: str = started["optimization_id"]
    assert started["events_url"] == f"/api/optimizations/{optimization_id}/events"
    assert started["page_url"] == f"/optimizations/{optimization_id}"
    return optimization_id


def _events(client: TestClient, optimization_id: str) -> list[tuple[str, Any]]:
    stream = client.get(f"/api/optimizations/{optimization_id}/events")
    assert stream.status_code == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    return [(name, json.loads(data)) for name, data in sse_events(stream.text)]


def _wait(client: TestClient, optimization_id: str, ready: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        detail = client.get(f"/api/optimizations/{optimization_id}").json()
        if ready(detail):
            return detail
        time.sleep(0.05)
    raise AssertionError(f"optimization {optimization_id} did not get there in {timeout} s")


def test_optimize_streams_status_checkpoints_scoreboard_and_result(
    client: TestClient, store: Store, mock: MockOpenAIServer, tmp_path: Path
) -> None:
    optimization_id = _start(client, optimize_body(mock.base_url))
    events = _events(client, optimization_id)
    names = [name for name, _ in events]

    # the order a watcher needs: status first, the result last (the stream then ends)
    assert names[0] == "status" and names[-1] == "result"
    assert set(names) <= {"status", "log", "checkpoint", "scoreboard", "result"}
    assert names.index("scoreboard") < names.index("result")
    statuses = [data for name, data in events if name == "status"]
    assert statuses[0]["max_metric_calls"] == 40
    assert [s["state"] for s in statuses][-1] == "completed"
    # the seed is verbose: keyword coverage 1, exact match 0, so 0.5 per row
    assert statuses[-1]["best_val_score"] == 1.0 and statuses[-1]["seed_val_score"] == 0.5
    assert all(s["metric_calls"] <= 40 + 10 for s in statuses)

    checkpoints = [data for name, data in events if name == "checkpoint"]
    assert [(c["idx"], c["parents"], c["changed"], c["val_score"]) for c in checkpoints] == [
        (0, [], [], 0.5),
        (1, [0], ["instructions"], 1.0),
    ]
    assert checkpoints[1]["is_best"] and TERSE_RULE in checkpoints[1]["components"]["instructions"]

    # the last scoreboard is the best candidate's: every validation row, per scorer
    board = [data for name, data in events if name == "scoreboard"][-1]
    assert board["candidate_idx"] == 1
    assert [s["id"] for s in board["scorers"]] == ["exact-match", "keyword-coverage"]
    val_rows = [r for r in board["rows"] if r["split"] == "val"]
    assert [r["item_id"] for r in val_rows] == ["q10", "q11", "q12", "q13"]
    train_rows = [r for r in board["rows"] if r["split"] == "train"]
    assert train_rows and all(r["item_id"] in {f"q{i}" for i in range(6)} for r in train_rows)
    for row in board["rows"]:
        assert set(row["scorers"]) == {"exact-match", "keyword-coverage"}
        assert row["scorers"]["exact-match"]["score"] == 1.0 and row["score"] == 1.0
        assert row["output"] == row["expected_output"]

    # logs: stored evaluations and the in-process proposal with its diff
    logs = [data["message"] for name, data in events if name == "log"]
    assert any("candidate 0 evaluated on val (4 rows): mean score 0.500" in m for m in logs)
    assert any(
        m.startswith("proposed a new 'instructions'") and f"+{TERSE_RULE}" in m for m in logs
    )

    # the result: best candidate, held-out comparison and its significance
    result = events[-1][1]
    assert result["best_prompt"] == f"You solve arithmetic.\n{TERSE_RULE}\n\nBe friendly."
    test = result["result"]["test"]
    assert (test["seed_score"], test["best_score"], test["items"]) == (0.5, 1.0, 6)
    assert test["verdict"] == "improved" and test["significant"] is True

    # the stored optimization is what was streamed
    detail = client.get(f"/api/optimizations/{optimization_id}").json()
    assert detail["status"] == "completed"
    assert detail["result"] == result["result"]
    assert [
        (c["idx"], c["parents"], c["val_score"], c["components"]) for c in detail["candidates"]
    ] == [(c["idx"], c["parents"], c["val_score"], c["components"]) for c in checkpoints]
    assert detail["progress"]["metric_calls"] == statuses[-1]["metric_calls"]
    # inline items were stored as datasets first; the run dir is the server's
    names_stored = sorted(d.name for d in store.datasets.list())
    prefix = f"optimization-{optimization_id[:12]}"
    assert names_stored == [f"{prefix}-test", f"{prefix}-train", f"{prefix}-val"]
    assert detail["config"]["train"] == {"dataset": f"{prefix}-train", "version": 1}
    record = store.optimizations.get(optimization_id)
    assert Path(record.run_dir) == (tmp_path / ".assay" / "optimizations" / optimization_id)
    assert (Path(record.run_dir) / "gepa_state.bin").exists()


def test_late_subscribers_get_the_current_state_first(
    client: TestClient, mock: MockOpenAIServer
) -> None:
    mock.latency_s = 0.2
    body = optimize_body(mock.base_url, stop_at_perfect=False, budget={"max_metric_calls": 30})
    optimization_id = _start(client, body)
    _wait(client, optimization_id, lambda d: len(d["candidates"]) >= 1)
    during = _events(client, optimization_id)
    # joined mid-run: the first event is the status as it stood, then the stored candidate
    assert during[0][0] == "status"
    first = during[0][1]
    assert first["state"] == "running" and first["candidates"] >= 1 and first["metric_calls"] >= 4
    first_checkpoint = next(i for i, (name, _) in enumerate(during) if name == "checkpoint")
    assert during[first_checkpoint][1]["idx"] == 0
    assert "status" not in [name for name, _ in during[1:first_checkpoint]]
    assert during[-1][0] == "result"

    # joined after the end: the final state at once, then the stream ends
    after = _events(client, optimization_id)
    names = [name for name, _ in after]
    assert names[0] == "status" and after[0][1]["state"] == "completed"
    assert names[-1] == "result" and names.count("result") == 1
    assert [d["idx"] for n, d in after if n == "checkpoint"] == [
        d["idx"] for n, d in during if n == "checkpoint"
    ]
    assert names.count("scoreboard") == 1
    assert after[-1][1] == during[-1][1]


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"budget": None}, 422, "budget"),
        ({"budget": {}}, 422, "budget"),
        ({"train": {"data": "train.jsonl"}}, 422, "train.data"),
        ({"train": {"dataset": "x", "data": [{"input": "a"}]}}, 422, "train"),
        ({"run_dir": "/tmp/elsewhere"}, 422, "run_dir"),
        ({"max_metric_call": 3}, 422, "max_metric_call"),
        (
            {"scorers": [{"type": "exact-match", "params": {"strip": "often"}}]},
            422,
            "scorers[0].params.strip",
        ),
        ({"scorers": [{"type": "exact-match", "weight": 0}]}, 422, "scorers"),
        ({"task_model": "nope-provider/x"}, 422, "task_model"),
        ({"test": {"data": rows(2)}}, 422, "test"),
        ({"val": None, "train": {"data": rows(1)}}, 422, "train"),
        ({"train": {"data": [{"foo": 1}]}}, 422, "train.data"),
        ({"train": {"dataset": "no-such-dataset"}}, 404, None),
        ({"scorers": ["exact-matc"]}, 404, None),
    ],
)
def test_bad_requests_name_the_field_and_store_nothing(
    client: TestClient,
    store: Store,
    mock: MockOpenAIServer,
    change: dict[str, Any],
    status: int,
    field: str | None,
) -> None:
    body = optimize_body(mock.base_url)
    body.update(change)
    answer = client.post("/api/optimize", json=body)
    assert answer.status_code == status, answer.text
    if field is not None:
        assert field in [problem["field"] for problem in answer.json()["detail"]], answer.text
    assert client.get("/api/optimizations").json() == []
    assert store.datasets.list() == []
    assert store.runs.list() == []


def test_a_dataset_version_that_does_not_exist_is_named(
    client: TestClient, store: Store, mock: MockOpenAIServer
) -> None:
    store.datasets.create("arith")
    store.datasets.add_items("arith", rows(6))
    body = optimize_body(mock.base_url, train={"dataset": "arith", "version": 7})
    answer = client.post("/api/optimize", json=body)
    assert answer.status_code == 422
    [problem] = answer.json()["detail"]
    assert problem["field"] == "train.version" and "latest: 1" in problem["msg"]
    assert client.get("/api/optimizations").json() == []
    assert [d.name for d in store.datasets.list()] == ["arith"]


def test_stored_datasets_are_pinned_at_start(
    client: TestClient, store: Store, mock: MockOpenAIServer
) -> None:
    for name, items in (("train", rows(6)), ("val", rows(4, start=10))):
        store.datasets.create(name)
        store.datasets.add_items(name, items)
    body = optimize_body(mock.base_url, train={"dataset": "train"}, val={"dataset": "val"})
    del body["test"]
    optimization_id = _start(client, body)
    assert _events(client, optimization_id)[-1][0] == "result"
    config = client.get(f"/api/optimizations/{optimization_id}").json()["config"]
    assert (config["train"], config["val"]) == (
        {"dataset": "train", "version": 1},
        {"dataset": "val", "version": 1},
    )
    assert sorted(d.name for d in store.datasets.list()) == ["train", "val"]  # nothing inline


def test_base_urls_off_loopback_are_refused_unless_listed(
    db_url: str, mock: MockOpenAIServer
) -> None:
    outside = "http://10.20.30.40:8000/v1"
    body = optimize_body(
        mock.base_url,
        task_base_url=outside,
        scorers=[
            {"type": "exact-match"},
            {"type": "faithfulness", "params": {"model": "openai/x", "base_url": outside}},
        ],
    )
    with TestClient(create_app(store_url=db_url), base_url=LOCAL) as client:
        answer = client.post("/api/optimize", json=body)
        assert answer.status_code == 422
        fields = [problem["field"] for problem in answer.json()["detail"]]
        assert fields == ["task_base_url", "scorers[1].params.base_url"]
        assert "ASSAY_SERVER_ALLOWED_BASE_URLS" in answer.text
        assert client.get("/api/optimizations").json() == []
    # listed by the operator: the URL passes (the request then fails on its dataset, later)
    listed = {**body, "train": {"dataset": "missing"}}
    with TestClient(
        create_app(store_url=db_url, allowed_base_urls=["http://10.20.30.40:8000"]),
        base_url=LOCAL,
    ) as client:
        answer = client.post("/api/optimize", json=listed)
        assert answer.status_code == 404 and "missing" in answer.text


def test_cancel_leaves_a_resumable_optimization(
    client: TestClient, store: Store, mock: MockOpenAIServer
) -> None:
    mock.latency_s = 0.2
    body = optimize_body(mock.base_url, stop_at_perfect=False, budget={"max_metric_calls": 30})
    optimization_id = _start(client, body)
    _wait(client, optimization_id, lambda d: len(d["candidates"]) >= 1)
    cancelled = client.post(f"/api/optimizations/{optimization_id[:10]}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json() == {"optimization_id": optimization_id, "cancelled": True}
    record = store.optimizations.get(optimization_id)
    assert record.status == "interrupted"
    assert record.progress["lease_owner"] is None
    spent = record.progress["metric_calls"]
    assert spent < 30
    # a stream of the interrupted optimization ends with an error event
    events = _events(client, optimization_id)
    assert events[0][0] == "status" and events[-1][0] == "error"
    assert events[-1][1]["state"] == "interrupted"
    assert client.post(f"/api/optimizations/{optimization_id}/cancel").status_code == 409

    mock.latency_s = 0.0
    resumed = client.post(f"/api/optimizations/{optimization_id}/resume")
    assert resumed.status_code == 202, resumed.text
    assert resumed.json()["optimization_id"] == optimization_id
    assert _events(client, optimization_id)[-1][0] == "result"
    record = store.optimizations.get(optimization_id)
    assert record.status == "completed" and record.result is not None
    assert 30 <= record.result["metric_calls"] <= 40  # the budget counted across both parts
    again = client.post(f"/api/optimizations/{optimization_id}/resume")
    assert again.status_code == 409 and "already completed" in again.text
    assert client.post(f"/api/optimizations/{optimization_id}/cancel").status_code == 409


# ---------------------------------------------------------------- optimizations of the CLI


def _cli(
    db_url: str, tmp_path: Path, mock: MockOpenAIServer, **changes: Any
) -> subprocess.Popen[str]:
    """``assay optimize CONFIG.yaml`` in its own process, against the server's store."""
    config = optimize_body(mock.base_url, **changes)
    for split in ("train", "val", "test"):
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in config[split]["data"]), "utf-8")
        config[split] = str(path)
    file = tmp_path / "optimize.yaml"
    file.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "HOME": os.environ.get("HOME", "/tmp"),
        "ASSAY_CACHE": "off",
    }
    command = [sys.executable, "-m", "assay", "--db", db_url, "optimize", str(file), "--json"]
    return subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _first_optimization(client: TestClient, process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        listed = client.get("/api/optimizations").json()
        if listed and listed[0]["progress"].get("metric_calls"):
            optimization_id: str = listed[0]["id"]
            return optimization_id
        time.sleep(0.05)
    raise AssertionError(f"the CLI optimization did not start: {process.communicate()[1]}")


ROOT = Path(__file__).resolve().parents[3]


def test_follows_an_optimization_started_from_the_cli(
    client: TestClient, db_url: str, mock: MockOpenAIServer, tmp_path: Path
) -> None:
    mock.latency_s = 0.1
    process = _cli(db_url, tmp_path, mock)
    try:
        optimization_id = _first_optimization(client, process)
        # executing in another process: this server cannot cancel it
        refused = client.post(f"/api/optimizations/{optimization_id}/cancel")
        assert refused.status_code == 409 and "not executing in this server" in refused.text
        events = _events(client, optimization_id)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    names = [name for name, _ in events]
    assert names[0] == "status" and names[-1] == "result"
    assert [d["idx"] for n, d in events if n == "checkpoint"] == [0, 1]
    assert "scoreboard" in names and any(n == "log" for n in names)
    assert events[-1][1]["result"] == json.loads(stdout)  # what the CLI printed


def test_a_killed_cli_optimization_ends_its_stream_with_an_error(
    client: TestClient,
    db_url: str,
    mock: MockOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed, "STALE_AFTER_S", 0.5)
    mock.latency_s = 0.1
    process = _cli(db_url, tmp_path, mock, stop_at_perfect=False, budget={"max_metric_calls": 60})
    try:
        optimization_id = _first_optimization(client, process)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        process.kill()
    events = _events(client, optimization_id)
    assert events[0][0] == "status" and events[0][1]["state"] == "running"
    name, error = events[-1]
    assert name == "error" and error["state"] == "running"
    assert "no live process" in error["message"] and f"resume {optimization_id}" in error["message"]
