"""The guards of ``create_app``: token, upload limit, CSRF, generic 500s."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assay.server.app import create_app
from assay.server.security import CSRF_COOKIE, TOKEN_COOKIE
from tests.server.api.conftest import client, db_url

__all__ = ["client", "db_url"]  # the fixtures, shared with the API tests


@pytest.fixture
def guarded(db_url: str) -> Iterator[TestClient]:
    app = create_app(store_url=db_url, token="s3cret", max_upload_bytes=2_000)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_token_required_when_configured(guarded: TestClient) -> None:
    assert guarded.get("/api/datasets").status_code == 401
    assert (
        guarded.get("/api/datasets", headers={"Authorization": "Bearer wrong"}).status_code == 401
    )
    ok = guarded.get("/api/datasets", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_query_token_sets_a_cookie_for_later_requests(guarded: TestClient) -> None:
    first = guarded.get("/api/datasets?token=s3cret")
    assert first.status_code == 200
    assert guarded.cookies.get(TOKEN_COOKIE) == "s3cret"
    assert guarded.get("/api/datasets").status_code == 200  # the cookie carries it now


def test_no_token_needed_without_one(client: TestClient) -> None:
    assert client.get("/api/datasets").status_code == 200


def test_body_over_the_limit_is_413(guarded: TestClient) -> None:
    auth = {"Authorization": "Bearer s3cret"}
    big = b'{"id": "x", "input": "' + b"a" * 5_000 + b'"}\n'
    answer = guarded.post("/api/datasets/d/import", files={"file": ("d.jsonl", big)}, headers=auth)
    assert answer.status_code == 413
    assert "2000 bytes" in answer.json()["detail"]
    assert guarded.get("/api/datasets", headers=auth).json() == []  # nothing stored


def test_streamed_body_over_the_limit_is_413(guarded: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b"x" * 500

    answer = guarded.post(
        "/api/datasets",
        content=chunks(),
        headers={"Authorization": "Bearer s3cret", "Content-Type": "application/json"},
    )
    assert answer.status_code == 413


def test_cross_site_api_write_is_refused(client: TestClient) -> None:
    answer = client.post(
        "/api/datasets",
        json={"name": "d"},
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert answer.status_code == 403
    assert client.get("/api/datasets").json() == []
    token = client.cookies.get(CSRF_COOKIE)
    echoed = client.post(
        "/api/datasets",
        json={"name": "e"},
        headers={"Origin": "https://proxy.example", "X-CSRF-Token": str(token)},
    )
    assert echoed.status_code == 201  # the echoed cookie proves the page is ours
    same = client.post("/api/datasets", json={"name": "d"}, headers={"Origin": "http://testserver"})
    assert same.status_code == 201


def test_form_post_to_a_page_needs_the_csrf_token(client: TestClient) -> None:
    from fastapi import Form

    async def echo(value: str = Form()) -> dict[str, str]:
        return {"value": value}

    client.app.add_api_route("/form-echo", echo, methods=["POST"])  # type: ignore[attr-defined]
    client.get("/api/datasets")  # any response hands out the CSRF cookie
    token = client.cookies.get(CSRF_COOKIE)
    assert token
    refused = client.post("/form-echo", data={"value": "x"})
    assert refused.status_code == 403
    wrong = client.post("/form-echo", data={"value": "x", "csrf_token": "forged"})
    assert wrong.status_code == 403
    ok = client.post("/form-echo", data={"value": "x", "csrf_token": token})
    assert ok.status_code == 200 and ok.json() == {"value": "x"}


def test_unexpected_error_is_a_generic_500_without_traceback(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    def boom() -> None:
        raise RuntimeError("secret internals /home/user/file.py")

    client.app.add_api_route("/api/boom", boom)  # type: ignore[attr-defined]
    answer = client.get("/api/boom")
    assert answer.status_code == 500
    body = answer.json()
    assert set(body) == {"detail", "error_id"}
    assert "secret" not in answer.text and "Traceback" not in answer.text
    assert any(body["error_id"] in r.getMessage() and r.exc_info for r in caplog.records)
