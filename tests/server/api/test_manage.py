"""Managing stored data over the API: rename and tag runs, delete runs and datasets."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.operations.stored_runs import run_stored
from assay.store import Store

ROWS = [{"id": "a/b?#%", "input": "x", "output": "x", "expected_output": "x"}]


def test_rename_and_tag_a_run(client: TestClient, store: Store) -> None:
    run_id = run_stored(ROWS, None, ["exact-match"], store=store).id
    answer = client.patch(
        f"/api/runs/{run_id[:8]}", json={"name": "nightly <b>", "add_tags": ["b", "a=1"]}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["info"]["name"] == "nightly <b>"
    assert answer.json()["info"]["tags"] == ["a=1", "b"]
    removed = client.patch(f"/api/runs/{run_id}", json={"remove_tags": ["b"], "name": ""})
    assert removed.json()["info"]["tags"] == ["a=1"] and removed.json()["info"]["name"] is None
    assert store.runs.get(run_id).info.tags == ["a=1"]
    bad = client.patch(f"/api/runs/{run_id}", json={"add_tags": ["bad\ttag"]})
    assert bad.status_code == 422 and "control characters" in bad.text
    assert client.patch("/api/runs/nope", json={}).status_code == 404
    assert client.patch(f"/api/runs/{run_id}", json={"colour": "red"}).status_code == 422


def test_delete_a_run_and_a_dataset(client: TestClient, store: Store) -> None:
    run_id = run_stored(ROWS, None, ["exact-match"], store=store).id
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert store.runs.list() == []
    assert client.delete(f"/api/runs/{run_id}").status_code == 404
    store.datasets.create("qa")
    store.datasets.add_items("qa", ROWS)
    assert client.delete("/api/datasets/qa").status_code == 204
    assert store.datasets.list() == []
    assert client.delete("/api/datasets/qa").status_code == 404


def test_an_import_that_creates_a_dataset_keeps_the_description_and_a_failed_one_leaves_nothing(
    client: TestClient, store: Store
) -> None:
    good = b'{"id": "x/1", "input": "a", "expected_output": "b"}\n'
    made = client.post(
        "/api/datasets/new%2Fset/import",
        files={"file": ("d.jsonl", good)},
        data={"description": "first"},
    )
    assert made.status_code == 200, made.text
    assert store.datasets.get("new/set").description == "first"
    again = client.post(
        "/api/datasets/new%2Fset/import",
        files={"file": ("d.jsonl", b'{"id": "x/2", "input": "c", "expected_output": "d"}\n')},
        data={"description": "second"},
    )
    assert again.status_code == 200 and store.datasets.get("new/set").description == "first"
    assert client.get("/api/datasets/new%2Fset/items").status_code == 200
    bad = client.post(
        "/api/datasets/broken/import",
        files={"file": ("d.jsonl", good + b"{not json\n")},
        data={"description": "x"},
    )
    assert bad.status_code == 422 and "line 2" in bad.text
    assert [d.name for d in store.datasets.list()] == ["new/set"]
