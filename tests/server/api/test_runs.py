"""``/api/runs``: start in the background, progress as SSE, pages with filters, compare,
export, cancel and resume."""

from __future__ import annotations

import csv
import io
import json
import time
from typing import Any

from fastapi.testclient import TestClient

from assay.server.app import create_app
from assay.store import Store
from assay.testing.openai_server import MockOpenAIServer
from tests.server.api.conftest import LOCAL, sse_events

ITEMS = [
    {"id": "a", "input": "capital of France", "output": "Paris", "expected_output": "Paris"},
    {"id": "b", "input": "capital of Spain", "output": "Lisbon", "expected_output": "Madrid"},
    {"id": "c", "input": "capital of Italy", "output": "Rome", "expected_output": "Rome"},
]


def start(client: TestClient, items: list[dict[str, Any]] = ITEMS, **extra: Any) -> str:
    answer = client.post("/api/runs", json={"data": items, "scorers": ["exact-match"], **extra})
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["run_id"]
    return run_id


def finish(client: TestClient, run_id: str) -> list[tuple[str, Any]]:
    stream = client.get(f"/api/runs/{run_id}/events")
    assert stream.status_code == 200
    return [(name, json.loads(data)) for name, data in sse_events(stream.text)]


def test_run_starts_streams_progress_and_finishes_with_summary(client: TestClient) -> None:
    run_id = start(client, name="first")
    events = finish(client, run_id)
    name, last = events[-1]
    assert name == "finished"
    assert (last["status"], last["done"], last["total"], last["errors"]) == ("completed", 3, 3, 0)
    assert last["summary"]["scorers"]["exact-match"]["mean"] == 2 / 3
    assert events[0][0] == "progress"
    detail = client.get(f"/api/runs/{run_id}").json()
    assert detail["info"]["name"] == "first" and detail["status"] == "completed"
    assert [r["info"]["id"] for r in client.get("/api/runs").json()] == [run_id]


def test_run_of_a_stored_dataset(client: TestClient) -> None:
    lines = "".join(json.dumps(item) + "\n" for item in ITEMS).encode()
    client.post("/api/datasets/caps/import", files={"file": ("caps.jsonl", lines)})
    answer = client.post("/api/runs", json={"dataset": "caps", "scorers": ["exact-match"]})
    run_id = answer.json()["run_id"]
    assert finish(client, run_id)[-1][1]["done"] == 3
    assert client.get(f"/api/runs/{run_id}").json()["info"]["dataset_name"] == "caps"


def test_bad_run_requests(client: TestClient) -> None:
    neither = client.post("/api/runs", json={"scorers": ["exact-match"]})
    assert neither.status_code == 422 and "exactly one" in neither.text
    unknown = client.post("/api/runs", json={"dataset": "nope", "scorers": ["exact-match"]})
    assert unknown.status_code == 404
    code = client.post(
        "/api/runs",
        json={
            "data": ITEMS,
            "scorers": ["exact-match"],
            "target": {"type": "callable", "ref": "os:system"},
        },
    )
    assert code.status_code == 422 and "not allowed" in code.text
    scorer = client.post("/api/runs", json={"data": ITEMS, "scorers": ["exact-matc"]})
    assert scorer.status_code == 404 and "exact-match" in scorer.text
    assert client.get("/api/runs").json() == []  # none of them stored a run


def test_run_base_urls_follow_the_policy(db_url: str) -> None:
    judge = {"type": "faithfulness", "params": {"base_url": "http://169.254.169.254/v1"}}
    target = {"type": "model", "model": "openai/gpt-4o-mini", "base_url": "http://10.1.2.3/v1"}
    body = {"data": ITEMS, "scorers": [judge], "target": target}
    with TestClient(create_app(store_url=db_url, allowed_base_urls=[]), base_url=LOCAL) as client:
        refused = client.post("/api/runs", json=body)
        assert refused.status_code == 422, refused.text
        fields = [problem["field"] for problem in refused.json()["detail"]]
        assert fields == ["target.base_url", "scorers[0].params.base_url"]
        assert client.get("/api/runs").json() == []  # nothing stored
    listed = ["http://10.1.2.3", "http://169.254.169.254/v1"]
    with TestClient(
        create_app(store_url=db_url, allowed_base_urls=listed), base_url=LOCAL
    ) as client:
        # past the policy, the request fails on its misspelt scorer (404), never reaching
        # the listed hosts, which do not exist here
        misspelt = {**body, "scorers": ["exact-matc", judge]}
        assert client.post("/api/runs", json=misspelt).status_code == 404


def test_items_pages_and_filters(client: TestClient) -> None:
    run_id = start(client)
    finish(client, run_id)

    def ids(query: str) -> tuple[int, list[str]]:
        page = client.get(f"/api/runs/{run_id}/items?{query}").json()
        return page["total"], [item["item_id"] for item in page["items"]]

    assert ids("limit=2") == (3, ["a", "b"])
    assert ids("limit=2&offset=2") == (3, ["c"])
    assert ids("max_score=0.5") == (1, ["b"])
    assert ids("min_score=0.5&scorer=exact-match") == (2, ["a", "c"])
    assert ids("q=SPAIN") == (1, ["b"])
    assert ids("q=%25") == (0, [])  # LIKE wildcards are matched literally
    assert ids("errors_only=true") == (0, [])
    assert ids("status=ready") == (3, ["a", "b", "c"])
    item = client.get(f"/api/runs/{run_id}/items/b").json()
    assert item[0]["scores"]["exact-match"]["score"] == 0.0
    assert client.get(f"/api/runs/{run_id}/items/zz").status_code == 404
    assert client.get(f"/api/runs/{run_id}/items?status=bogus").status_code == 422


def test_compare_regressions_first_with_statistics(client: TestClient) -> None:
    base = start(client)
    changed = [
        {**ITEMS[0], "output": "Lyon"},  # regressed
        {**ITEMS[1], "output": "Madrid"},  # improved
        ITEMS[2],
    ]
    other = start(client, changed)
    finish(client, base)
    finish(client, other)
    page = client.get(f"/api/runs/{other}/compare?baseline={base}").json()
    assert [(r["item_id"], r["deltas"], r["regressed"]) for r in page["rows"]] == [
        ("a", [-1.0], True),
        ("c", [0.0], False),
        ("b", [1.0], False),
    ]
    # the first page never waits for the statistics: they are computed in the background
    assert (page["statistics"], page["statistics_pending"]) == ([], True)
    alone = client.get(f"/api/runs/{other}/compare/statistics?baseline={base}").json()
    assert [c["b"]["id"] for c in alone] == [other] and alone[0]["a"]["id"] == base
    stats = alone[0]["scorers"][0]
    assert (stats["n_paired"], stats["mean_a"], stats["mean_b"], stats["delta"]) == (
        3,
        2 / 3,
        2 / 3,
        0.0,
    )
    assert [d["item_id"] for d in stats["regressed"]] == ["a"]
    assert [d["item_id"] for d in stats["improved"]] == ["b"]
    # once computed, the page carries them, without their item lists (counted)
    cached = client.get(f"/api/runs/{other}/compare?baseline={base}").json()
    assert (cached["statistics_pending"], cached["item_lists_omitted"]) == (False, True)
    [scorer] = cached["statistics"][0]["scorers"]
    assert (scorer["regressed"], scorer["improved"]) == ([], [])
    assert (scorer["n_regressed"], scorer["n_improved"]) == (1, 1)
    assert {**scorer, "regressed": stats["regressed"], "improved": stats["improved"]} == stats
    assert cached["rows"] == page["rows"]
    with_lists = client.get(f"/api/runs/{other}/compare?baseline={base}&item_lists=true").json()
    assert (with_lists["statistics"], with_lists["item_lists_omitted"]) == (alone, False)
    counted = client.get(
        f"/api/runs/{other}/compare/statistics?baseline={base}&item_lists=false"
    ).json()
    assert counted == cached["statistics"]
    # the lists, paged from their own endpoint
    items = f"/api/runs/{other}/compare/items?baseline={base}&scorer=exact-match"
    regressed = client.get(items).json()
    assert (regressed["which"], regressed["total"], regressed["run"]) == ("regressed", 1, other)
    assert regressed["items"] == stats["regressed"]
    improved = client.get(f"{items}&which=improved&offset=0&limit=1").json()
    assert (improved["total"], improved["items"]) == (1, stats["improved"])
    assert client.get(f"{items}&which=improved&offset=1").json()["items"] == []
    missing = client.get(f"/api/runs/{other}/compare/items?baseline={base}&scorer=nope")
    assert missing.status_code == 404 and "'nope'" in missing.json()["detail"]
    assert client.get(f"{items}&which=worse").status_code == 422
    assert client.get(f"{items}&limit=0").status_code == 422
    second = client.get(f"/api/runs/{other}/compare?baseline={base}&limit=1&offset=1").json()
    assert second["total"] == 3 and [r["item_id"] for r in second["rows"]] == ["c"]
    # the statistics (and their item lists) go with the first page only
    assert (second["statistics"], second["statistics_omitted"]) == ([], True)
    assert cached["statistics_omitted"] is False
    # the change filter holds over the whole comparison, not the page
    for state, ids in (("regressed", ["a"]), ("improved", ["b"]), ("same", ["c"])):
        kept = client.get(f"/api/runs/{other}/compare?baseline={base}&state={state}&limit=1").json()
        assert (kept["total"], [r["item_id"] for r in kept["rows"]], kept["state"]) == (
            1,
            ids,
            state,
        )
    assert client.get(f"/api/runs/{other}/compare?baseline={base}&state=x").status_code == 422
    assert client.get(f"/api/runs/{other}/compare?baseline=nope").status_code == 404
    rows_only = client.get(f"/api/runs/{other}/compare?baseline={base}&statistics=false").json()
    assert rows_only["statistics"] == [] and rows_only["rows"] == page["rows"]
    assert rows_only["statistics_pending"] is False


def test_compare_computes_pending_statistics_in_the_background(client: TestClient) -> None:
    base = start(client)
    other = start(client, [{**ITEMS[0], "output": "Lyon"}, *ITEMS[1:]])
    finish(client, base)
    finish(client, other)
    url = f"/api/runs/{other}/compare?baseline={base}&threshold=0.5"
    first = client.get(url).json()
    assert first["statistics_pending"] is True
    deadline = time.monotonic() + 10.0
    page = first
    while page["statistics_pending"] and time.monotonic() < deadline:
        time.sleep(0.05)
        page = client.get(url).json()
    # filled by the background job alone: compare/statistics was never asked
    assert page["statistics_pending"] is False
    [comparison] = page["statistics"]
    assert comparison["threshold"] == 0.5
    assert comparison["scorers"][0]["delta"] == -1 / 3
    assert comparison["scorers"][0]["n_regressed"] == 1
    listed = client.get(
        f"/api/runs/{other}/compare/items?baseline={base}&scorer=exact-match&threshold=0.5"
    ).json()
    assert [d["item_id"] for d in listed["items"]] == ["a"]


def test_export_jsonl_and_csv(client: TestClient) -> None:
    run_id = start(client)
    finish(client, run_id)
    lines = client.get(f"/api/runs/{run_id}/export?format=jsonl").text.splitlines()
    assert [json.loads(line)["item_id"] for line in lines] == ["a", "b", "c"]
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/api/runs/{run_id}/export?format=csv").text))
    )
    assert [(r["item_id"], r["exact-match.score"]) for r in rows] == [
        ("a", "1.0"),
        ("b", "0.0"),
        ("c", "1.0"),
    ]


def test_csv_export_neutralises_formulas_and_imports_back_unchanged(client: TestClient) -> None:
    items = [
        {"id": "=cmd|' /C calc'!A0", "input": "@SUM(1+1)*cmd", "output": "", "expected_output": ""},
        {"id": "b", "input": "-2+3", "output": "+1", "expected_output": "\tx"},
        {"id": "c", "input": "q", "output": None, "expected_output": "=1"},
    ]
    run_id = start(client, items)
    finish(client, run_id)
    exported = client.get(f"/api/runs/{run_id}/export?format=csv").text
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0][5:8] == ["input", "output", "expected_output"]
    assert not [c for row in rows for c in row if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert [row[0] for row in rows[1:]] == ["'=cmd|' /C calc'!A0", "b", "c"]
    # and the export imports back as a dataset with the same texts ("" stays "")
    imported = client.post(
        "/api/datasets/again/import",
        files={"file": ("run.csv", exported.encode(), "text/csv")},
        data={"map": ["id=item_id"], "create": "true"},
    )
    assert imported.status_code == 200, imported.text
    back = client.get("/api/datasets/again/items").json()["items"]
    assert [(i["id"], i["input"], i["output"], i["expected_output"]) for i in back] == [
        (i["id"], i["input"], i["output"], i["expected_output"]) for i in items
    ]


def test_cancel_then_resume(client: TestClient, store: Store) -> None:
    with MockOpenAIServer(latency_s=0.3) as server:
        target = {
            "type": "model",
            "model": "openai-compatible/slow",
            "base_url": server.base_url,
            "prompt": "{input}",
        }
        items = [{"id": str(i), "input": f"q{i}", "expected_output": "ok"} for i in range(20)]
        run_id = start(client, items, target=target, concurrency=2)
        cancelled = client.post(f"/api/runs/{run_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["cancelled"] is True
        record = store.runs.get(run_id)
        assert record.status == "interrupted" and record.completed_results < 20
        again = client.post(f"/api/runs/{run_id}/cancel")
        assert again.status_code == 409
        server.latency_s = 0.0
        resumed = client.post(f"/api/runs/{run_id}/resume")
        assert resumed.status_code == 200 and resumed.json()["run_id"] == run_id
        assert finish(client, run_id)[-1][1]["done"] == 20
    assert store.runs.get(run_id).status == "completed"
    assert len(store.runs.completed_keys(run_id)) == 20


def test_unknown_run_is_404(client: TestClient) -> None:
    for path in ("", "/items", "/events", "/export", "/items/x/annotations"):
        assert client.get(f"/api/runs/nope{path}").status_code == 404, path


def test_export_batches_keep_every_line_in_order() -> None:
    from assay.server.api.runs import EXPORT_BATCH, _batched

    pieces = [f"row {i}\n" * 100 for i in range(3 * EXPORT_BATCH // 600 + 1)]
    chunks = list(_batched(iter(pieces)))
    assert "".join(chunks) == "".join(pieces)
    assert len(chunks) > 1
    assert all(len(chunk) >= EXPORT_BATCH for chunk in chunks[:-1])
    assert all(len(chunk) < EXPORT_BATCH + len(pieces[0]) for chunk in chunks)
    assert list(_batched(iter([]))) == []
