"""``/api/datasets``: create, upload (all or nothing), pages, versions, history."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.store import Store

GOOD = b'{"id": "a", "input": "1+1", "expected_output": "2"}\n{"id": "b", "input": "2+2"}\n'


def test_create_and_list(client: TestClient) -> None:
    made = client.post("/api/datasets", json={"name": "qa", "description": "questions"})
    assert made.status_code == 201 and made.json()["version"] == 0
    assert [d["name"] for d in client.get("/api/datasets").json()] == ["qa"]
    again = client.post("/api/datasets", json={"name": "qa"})
    assert again.status_code == 409 and "qa" in again.json()["detail"]


def test_upload_imports_every_row_as_one_version(client: TestClient) -> None:
    answer = client.post("/api/datasets/qa/import", files={"file": ("qa.jsonl", GOOD)})
    assert answer.status_code == 200, answer.text
    assert answer.json()["read"] == 2 and answer.json()["dataset"]["item_count"] == 2
    page = client.get("/api/datasets/qa/items?limit=1&offset=1").json()
    assert page["total"] == 2 and [item["id"] for item in page["items"]] == ["b"]
    versions = client.get("/api/datasets/qa/versions").json()
    assert [(v["version"], v["added"], v["note"]) for v in versions][-1] == (
        1,
        2,
        "import qa.jsonl",
    )


def test_upload_with_a_column_map(client: TestClient) -> None:
    csv = b"key,question,answer\nk1,What?,That\n"
    answer = client.post(
        "/api/datasets/mapped/import",
        files={"file": ("rows.csv", csv)},
        data={"map": ["id=key", "input=question", "expected_output=answer"]},
    )
    assert answer.status_code == 200, answer.text
    item = client.get("/api/datasets/mapped/items").json()["items"][0]
    assert (item["id"], item["input"], item["expected_output"]) == ("k1", "What?", "That")


def test_a_bad_row_stores_nothing(client: TestClient, store: Store) -> None:
    bad = GOOD + b'{"id": "c"}\n'  # no input and no output
    answer = client.post("/api/datasets/qa/import", files={"file": ("qa.jsonl", bad)})
    assert answer.status_code == 422
    (problem,) = answer.json()["detail"]
    assert problem["field"] == "file"
    assert problem["msg"] == "qa.jsonl: line 3: field 'input': an item needs 'input' or 'output'"
    assert store.datasets.list() == []  # not even the dataset it would have created


def test_a_bad_map_names_the_map_field(client: TestClient) -> None:
    answer = client.post(
        "/api/datasets/qa/import", files={"file": ("qa.jsonl", GOOD)}, data={"map": ["garbage"]}
    )
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["field"] == "map"
    assert "FIELD=COLUMN" in answer.json()["detail"][0]["msg"]


def test_unknown_format_names_the_file_field(client: TestClient) -> None:
    answer = client.post("/api/datasets/qa/import", files={"file": ("qa.txt", GOOD)})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["field"] == "file"


def test_unknown_dataset_is_404_with_suggestion(client: TestClient) -> None:
    client.post("/api/datasets", json={"name": "questions"})
    answer = client.get("/api/datasets/questons/items")
    assert answer.status_code == 404
    assert "questions" in answer.json()["detail"]


def test_item_history(client: TestClient, store: Store) -> None:
    client.post("/api/datasets/qa/import", files={"file": ("qa.jsonl", GOOD)})
    store.datasets.update_item("qa", "a", expected_output="two")
    history = client.get("/api/datasets/qa/items/a/history").json()
    assert [h["item"]["expected_output"] for h in history] == ["2", "two"]
    assert client.get("/api/datasets/qa/items/zz/history").status_code == 404


def test_bad_paging_is_422_naming_the_query_field(client: TestClient) -> None:
    client.post("/api/datasets", json={"name": "qa"})
    answer = client.get("/api/datasets/qa/items?limit=0")
    assert answer.status_code == 422 and answer.json()["detail"][0]["field"] == "limit"
