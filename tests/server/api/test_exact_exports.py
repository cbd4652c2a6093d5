"""The API gives stored values back exactly (numbers of the same type, floats by ``repr``)
and exports a result holding a lone surrogate as valid UTF-8 (the escape ``\\ud800``),
on SQLite and PostgreSQL: the app over a real store, through Starlette's TestClient."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic_core import to_json

from assay.server.app import create_app
from assay.server.client_view import result_for_client
from assay.store import Store
from tests.server.api.conftest import LOCAL
from tests.store.conftest import postgres_schema_url  # noqa: F401  (a fixture)
from tests.store.test_json_exact import ALL, mismatches, result, run_info
from tests.store.test_surrogate_exports import results as surrogate_results


@pytest.fixture(params=["sqlite", "postgresql"])
def app_client(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'server.db'}"
    else:
        url = request.getfixturevalue("postgres_schema_url")
    with TestClient(
        create_app(store_url=url), raise_server_exceptions=False, base_url=LOCAL
    ) as client:
        yield client


def app_store(client: TestClient) -> Store:
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    return store


def test_items_page_item_and_export_keep_every_number(app_client: TestClient) -> None:
    store = app_store(app_client)
    store.runs.create(run_info("exact-run"))
    sent = [result(n, value) for n, value in enumerate(ALL)]
    store.runs.write_results("exact-run", sent)
    page = app_client.get("/api/runs/exact-run/items?limit=500")
    assert page.status_code == 200, page.text
    items = {i["item_id"]: i for i in json.loads(page.text)["items"]}
    lines = app_client.get("/api/runs/exact-run/export?format=jsonl").text.splitlines()
    exported = {d["item_id"]: d for d in map(json.loads, lines)}
    pairs = []
    for r in sent:
        for got in (items[r.item_id], exported[r.item_id]):
            pairs += [
                (r.output, got["output"]),
                (r.scores["s"].corpus, got["scores"]["s"]["corpus"]),
            ]
    assert mismatches(pairs) == []


def test_exports_of_a_lone_surrogate_are_valid_utf8(app_client: TestClient) -> None:
    store = app_store(app_client)
    store.runs.create(run_info("lone"))
    sent = surrogate_results()
    store.runs.write_results("lone", sent)
    jsonl = app_client.get("/api/runs/lone/export?format=jsonl")
    assert jsonl.status_code == 200
    body = jsonl.content.decode("utf-8")  # strict
    lines = [json.loads(line) for line in body.splitlines()]
    assert [line["item_id"] for line in lines] == [r.item_id for r in sent]
    assert lines[0]["output"] == sent[0].output and lines[1]["error"]["message"] == "boom\ud800"
    csv_body = app_client.get("/api/runs/lone/export?format=csv").content.decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(csv_body)))
    assert rows[0]["item_id"] == "id\\ud800"


def test_the_items_page_and_an_items_repeats_show_a_lone_surrogate(app_client: TestClient) -> None:
    """The run page's API: a stored lone surrogate was a 500 (pydantic refuses to write
    one); now the page is valid UTF-8 JSON with the escape, read back as the text."""
    store = app_store(app_client)
    store.runs.create(run_info("lone"))
    sent = [r.model_copy(update={"item_id": f"i{n}"}) for n, r in enumerate(surrogate_results())]
    store.runs.write_results("lone", sent)
    page = app_client.get("/api/runs/lone/items")
    assert page.status_code == 200, page.text
    items = json.loads(page.content.decode("utf-8"))["items"]
    assert [i["output"] for i in items] == [r.output for r in sent]
    assert items[0]["scores"]["s"]["reason"] == "because\ud800"
    one = app_client.get("/api/runs/lone/items/i0")
    assert one.status_code == 200, one.text
    assert json.loads(one.content.decode("utf-8"))[0]["input"] == sent[0].input
    plain = app_client.get("/api/runs/lone/items/i2")
    assert plain.headers["content-type"] == "application/json"
    assert plain.content == to_json([result_for_client(sent[2])])  # as FastAPI wrote it


def test_the_openapi_schema_still_names_the_items_models(app_client: TestClient) -> None:
    paths = app_client.get("/openapi.json").json()["paths"]
    page = paths["/api/runs/{run_id}/items"]["get"]["responses"]["200"]["content"]
    assert page["application/json"]["schema"]["$ref"].endswith("/RunItemsPage")
    item = paths["/api/runs/{run_id}/items/{item_id}"]["get"]["responses"]["200"]["content"]
    assert item["application/json"]["schema"]["items"]["$ref"].endswith("/ItemResult")
