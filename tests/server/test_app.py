"""The app as a whole: its OpenAPI spec matches the committed docs/openapi.json, and no
generated request (schemathesis over that spec) makes the server answer 5xx."""

from __future__ import annotations

import json
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, given, settings

from assay.server.app import create_app
from assay.server.openapi import REGENERATE, openapi_text

SPEC = Path(__file__).parents[2] / "docs" / "openapi.json"


def test_committed_openapi_spec_matches_the_app() -> None:
    current = openapi_text()
    committed = SPEC.read_text(encoding="utf-8") if SPEC.exists() else ""
    assert current == committed, (
        f"the API changed but docs/openapi.json did not: regenerate it with `{REGENERATE}` "
        "and commit it"
    )
    assert json.loads(committed)["paths"]["/api/scorers"]


def test_no_generated_request_makes_the_server_fail(tmp_path: Path) -> None:
    """Every operation, a few generated requests each (bounded: this runs in seconds)."""
    # schemathesis' ASGI client names the server "testserver": an allowed host here
    app = create_app(store_url=f"sqlite:///{tmp_path / 'fuzz.db'}", allowed_hosts=["testserver"])
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app)
    # an event stream stays open while its run or preview lives: streams are tested in
    # tests/server/api, not by a fuzzer that would wait on them
    loaded = loaded.exclude(path_regex=r".*/events$")
    failures: list[str] = []
    operations = [result.ok() for result in loaded.get_all_operations()]
    assert len(operations) >= 15

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: schemathesis.Case) -> None:
            response = case.call()
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.text[:300]}")

        check()
    assert not failures, "\n".join(failures)
    # POST /api/runs and /api/optimize may start background work; each generated call runs
    # in its own event loop (no lifespan), whose end cancels it: an optimization a valid
    # generated body started is stored interrupted, never left running for minutes
    store = app.state.store
    assert all(o.status != "running" for o in store.optimizations.list(limit=1000))


HUGE = str(10**30)


def test_huge_and_negative_numbers_in_queries_are_422_never_500(tmp_path: Path) -> None:
    """``offset``/``limit``/``version``/``repeat`` beyond what can address a stored row
    (or below 0), in the API and in the UI's pages: a 422 naming the field."""
    from fastapi.testclient import TestClient

    app = create_app(store_url=f"sqlite:///{tmp_path / 'huge.db'}")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        item = {"id": "a", "input": "a", "output": "a", "expected_output": "a"}
        run = client.post("/api/runs", json={"data": [item], "scorers": ["exact-match"]})
        run_id = run.json()["run_id"]
        client.get(f"/api/runs/{run_id}/events")  # until it finished
        assert client.post("/api/datasets", json={"name": "ds"}).status_code == 201
        compare = f"compare?baseline={run_id}&"
        paths = [
            ("/api/runs?", ("offset", "limit")),
            (f"/api/runs/{run_id}/items?", ("offset", "limit")),
            (f"/api/runs/{run_id}/{compare}", ("offset", "limit")),
            ("/api/datasets/ds/items?", ("offset", "limit")),
            ("/api/optimizations?", ("limit",)),
            (f"/runs/{run_id}?", ("offset",)),
            (f"/runs/{run_id}/{compare}", ("offset",)),
            ("/datasets/ds?", ("offset",)),
        ]
        for value in (HUGE, f"-{HUGE}", "-1", str(2**63), str(2**31)):
            for path, names in paths:
                for name in names:
                    answer = client.get(f"{path}{name}={value}")
                    assert answer.status_code == 422, (path, name, value, answer.text[:200])
                    assert name in answer.text
            note = {"author": "x", "label": "y", "repeat": int(value)}
            answer = client.post(f"/api/runs/{run_id}/items/a/annotations", json=note)
            assert answer.status_code == 422, (value, answer.text[:200])
            assert answer.json()["detail"][0]["field"] == "repeat"
        for value in (HUGE, "-1"):
            answer = client.get(f"/api/datasets/ds/items?version={value}")
            assert answer.status_code in (404, 422), answer.text[:200]


def test_api_docs_pages_load_their_assets_from_the_server_not_a_cdn(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(store_url=f"sqlite:///{tmp_path / 'docs.db'}")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for page, assets in (
            ("/docs", ("/static-docs/swagger-ui-bundle.js", "/static-docs/swagger-ui.css")),
            ("/redoc", ("/static-docs/redoc.standalone.js",)),
        ):
            html = client.get(page).text
            assert "cdn." not in html and "googleapis" not in html, page
            for asset in assets:
                assert asset in html
                answer = client.get(asset)
                assert answer.status_code == 200 and len(answer.content) > 100_000, asset
