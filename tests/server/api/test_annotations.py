"""``/api/runs/{id}/items/{item_id}/annotations``: append-only review, human labels."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.operations.annotations import human_labels, save_human_labels
from assay.store import Store
from tests.server.api.test_runs import finish, start


def test_annotations_keep_history_and_feed_human_labels(client: TestClient, store: Store) -> None:
    run_id = start(client)
    finish(client, run_id)
    url = f"/api/runs/{run_id}/items/b/annotations"
    first = client.post(url, json={"author": "ana", "label": "fail", "comment": "wrong capital"})
    assert first.status_code == 201
    second = client.post(url, json={"author": "bo", "label": "pass"})
    assert second.status_code == 201
    client.post(f"/api/runs/{run_id}/items/a/annotations", json={"author": "ana", "score": 0.25})
    client.post(f"/api/runs/{run_id}/items/c/annotations", json={"author": "ana", "comment": "?"})
    history = client.get(url).json()
    assert [(h["author"], h["label"]) for h in history] == [("ana", "fail"), ("bo", "pass")]
    assert history[0]["created_at"] <= history[1]["created_at"]

    labels = human_labels(run_id, store=store)
    assert [(i.id, i.metadata["human_label"], i.output) for i in labels] == [
        ("a", 0.25, "Paris"),
        ("b", "pass", "Lisbon"),
    ]  # c has a comment only: not a label
    info = save_human_labels(run_id, "reviewed", store=store)
    assert info.item_count == 2
    stored = store.datasets.get_item("reviewed", "b")
    assert stored.metadata["human_label"] == "pass"


def test_bad_annotations(client: TestClient) -> None:
    run_id = start(client)
    finish(client, run_id)
    url = f"/api/runs/{run_id}/items/a/annotations"
    empty = client.post(url, json={"author": "ana"})
    assert empty.status_code == 422 and "label, a score or a comment" in empty.text
    nameless = client.post(url, json={"author": " ", "label": "pass"})
    assert nameless.status_code == 422 and nameless.json()["detail"][0]["field"] == "author"
    missing = client.post(
        f"/api/runs/{run_id}/items/zz/annotations", json={"author": "a", "label": "x"}
    )
    assert missing.status_code == 404 and "zz" in missing.text
    repeat = client.post(url, json={"author": "a", "label": "x", "repeat": 3})
    assert repeat.status_code == 404
    assert client.get(url).json() == []  # nothing stored by any of them
