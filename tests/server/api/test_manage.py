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


def test_rename_a_dataset_with_url_characters_and_its_runs_follow(
    client: TestClient, store: Store
) -> None:
    store.datasets.create("team/qa", description="kept")
    store.datasets.add_items("team/qa", ROWS)
    store.datasets.create("taken")
    started = client.post("/api/runs", json={"dataset": "team/qa", "scorers": ["exact-match"]})
    assert started.status_code == 201, started.text
    renamed = client.patch("/api/datasets/team%2Fqa", json={"name": "q?a #2%"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "q?a #2%" and renamed.json()["description"] == "kept"
    listed = client.get("/api/datasets/q%3Fa%20%232%25/items")
    assert listed.status_code == 200 and listed.json()["items"][0]["id"] == "a/b?#%"
    assert client.get("/api/datasets/team%2Fqa/items").status_code == 404
    run = client.get(f"/api/runs/{started.json()['run_id']}").json()
    assert run["info"]["dataset_name"] == "q?a #2%"
    taken = client.patch("/api/datasets/q%3Fa%20%232%25", json={"name": "taken"})
    assert taken.status_code == 409 and "'taken' already exists" in taken.text
    assert client.patch("/api/datasets/nope", json={"name": "x"}).status_code == 404


def test_a_dataset_name_no_url_reaches_is_one_line_and_stores_nothing(
    client: TestClient, store: Store
) -> None:
    store.datasets.create("fine")
    for answer in (
        client.patch("/api/datasets/fine", json={"name": ".."}),
        client.post("/api/datasets", json={"name": " . "}),
    ):
        assert answer.status_code == 422, answer.text
        (problem,) = answer.json()["detail"]
        assert problem["field"] == "name"
        assert problem["msg"].startswith("dataset name ") and "Value error" not in problem["msg"]
        assert "cannot be addressed in a URL" in problem["msg"]
    upload = client.post(
        "/api/datasets/%2E%2E/import",
        files={"file": ("d.jsonl", b'{"id": "1", "input": "a"}\n')},
    )
    assert upload.status_code == 400
    assert upload.json() == {
        "detail": "dataset name '..' cannot be addressed in a URL: choose another"
    }
    assert [d.name for d in store.datasets.list()] == ["fine"]


def test_a_whole_request_error_says_its_message_once(client: TestClient) -> None:
    """A model-level validator's message reached the launcher as "body: body: Value error,
    ..."; the field is in ``field``, the message is the validator's own words."""
    answer = client.post(
        "/api/runs",
        json={
            "data": ROWS,
            "scorers": ["exact-match"],
            "target": {"type": "callable", "ref": "os:getcwd"},
        },
    )
    assert answer.status_code == 422, answer.text
    (problem,) = answer.json()["detail"]
    assert problem["field"] == "body"
    assert problem["msg"].startswith("target type 'callable' is not allowed here")


def test_an_item_id_no_url_reaches_is_refused_by_an_upload_and_a_run(
    client: TestClient, store: Store
) -> None:
    upload = client.post(
        "/api/datasets/qa/import",
        files={"file": ("d.jsonl", b'{"id": "a", "input": "x"}\n{"id": "..", "input": "y"}\n')},
    )
    assert upload.status_code == 422 and "line 2" in upload.text
    assert "cannot be addressed in a URL" in upload.text
    assert store.datasets.list() == []
    started = client.post(
        "/api/runs",
        json={"data": [{"id": ".", "input": "x", "output": "x"}], "scorers": ["exact-match"]},
    )
    assert started.status_code == 422 and "cannot be addressed in a URL" in started.text
    assert store.runs.list() == []
