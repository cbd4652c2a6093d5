"""The guards of ``create_app``: token, upload limit, CSRF, generic 500s."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assay.server.app import create_app
from assay.server.security import (
    CSRF_COOKIE,
    TOKEN_COOKIE,
    WeakTokenError,
    allowed_hosts,
    keep_tokens_out_of_logs,
    token_weakness,
)
from tests.server.api.conftest import LOCAL, client, db_url

__all__ = ["client", "db_url"]  # the fixtures, shared with the API tests

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture
def guarded(db_url: str) -> Iterator[TestClient]:
    app = create_app(store_url=db_url, token=TOKEN, max_upload_bytes=2_000)
    with TestClient(app, raise_server_exceptions=False, base_url=LOCAL) as test_client:
        yield test_client


def test_token_required_when_configured(guarded: TestClient) -> None:
    assert guarded.get("/api/datasets").status_code == 401
    assert (
        guarded.get("/api/datasets", headers={"Authorization": "Bearer wrong"}).status_code == 401
    )
    ok = guarded.get("/api/datasets", headers={"Authorization": "Bearer " + TOKEN})
    assert ok.status_code == 200


def test_query_token_sets_a_cookie_for_later_requests(guarded: TestClient) -> None:
    first = guarded.get("/api/datasets?token=" + TOKEN)
    assert first.status_code == 200
    assert guarded.cookies.get(TOKEN_COOKIE) == TOKEN
    assert guarded.get("/api/datasets").status_code == 200  # the cookie carries it now


def test_no_token_needed_without_one(client: TestClient) -> None:
    assert client.get("/api/datasets").status_code == 200


def test_body_over_the_limit_is_413(guarded: TestClient) -> None:
    auth = {"Authorization": "Bearer " + TOKEN}
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
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"},
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
    same = client.post("/api/datasets", json={"name": "d"}, headers={"Origin": LOCAL})
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


def test_a_weak_token_is_refused_when_the_app_is_built(db_url: str) -> None:
    for weak in (
        "s3cret",
        "x" * 40,
        "abcabcabcabcabcabcabcabc",
        "aabbccddeeffgghhiijj",
        f" {TOKEN}",
    ):
        with pytest.raises(WeakTokenError, match="too weak"):
            create_app(store_url=db_url, token=weak)
    assert token_weakness(TOKEN) is None


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.0.0.1:8765", True),
        ("LOCALHOST:8765", True),
        ("localhost.", True),
        ("[::1]:8765", True),
        ("evil.example", False),
        ("evil.example:8765", False),
        ("127.0.0.1.nip.io", False),
        ("localhost.evil.example", False),
        ("assay.internal:443", True),  # ASSAY_SERVER_ALLOWED_HOSTS
        ("10.0.0.7:8765", True),  # the bound address
        ("10.0.0.8", False),
        ("", False),
        ("evil@127.0.0.1", False),  # userinfo: no browser sends it, nor may anyone else
        ("127.0.0.1:abc", False),
        ("127.0.0.1 evil", False),
        ("[fd00::5]:8765", True),  # ASSAY_SERVER_ALLOWED_HOSTS, an IPv6 literal
    ],
)
def test_the_host_header_must_name_this_server(
    db_url: str, monkeypatch: pytest.MonkeyPatch, host: str, allowed: bool
) -> None:
    monkeypatch.setenv("ASSAY_SERVER_ALLOWED_HOSTS", "Assay.Internal, other.internal, [fd00::5]")
    app = create_app(store_url=db_url, bind_host="10.0.0.7")
    with TestClient(app, base_url=LOCAL) as client:
        for path in ("/api/datasets", "/", "/static/app.js", "/openapi.json"):
            answer = client.get(path, headers={"Host": host})
            if allowed:
                assert answer.status_code == 200, (path, host)
            else:
                assert answer.status_code == 421, (path, host)
                assert "ASSAY_SERVER_ALLOWED_HOSTS" in answer.json()["detail"]
        write = client.post("/api/datasets", json={"name": "d"}, headers={"Host": host})
        assert write.status_code == (201 if allowed else 421)


def test_a_wildcard_host_entry_accepts_any_name(db_url: str) -> None:
    app = create_app(store_url=db_url, allowed_hosts=["*"])
    with TestClient(app, base_url="http://whatever.example") as client:
        assert client.get("/api/datasets").status_code == 200


def test_every_response_forbids_framing_and_sniffing(guarded: TestClient) -> None:
    def boom() -> None:
        raise RuntimeError("boom")

    guarded.app.add_api_route("/api/boom", boom)  # type: ignore[attr-defined]
    auth = {"Authorization": "Bearer " + TOKEN}
    answers = [
        guarded.get("/api/datasets", headers=auth),  # 200
        guarded.get("/", headers=auth),  # an HTML page
        guarded.get("/static/app.js", headers=auth),
        guarded.get("/api/datasets"),  # 401
        guarded.get("/api/runs/nope", headers=auth),  # 404
        guarded.get("/api/datasets", headers={**auth, "Host": "evil.example"}),  # 421
        guarded.post("/api/datasets", content=b"x" * 5_000, headers=auth),  # 413
        guarded.get("/api/boom", headers=auth),  # 500
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 401, 404, 421, 413, 500]
    for answer in answers:
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_tokens_are_redacted_from_log_records(caplog: pytest.LogCaptureFixture) -> None:
    keep_tokens_out_of_logs()
    access = logging.getLogger("uvicorn.access")
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        access.info(
            '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", f"/?a=1&token={TOKEN}&b=2", "1.1", 200
        )
        access.info(f"GET /x?TOKEN={TOKEN}")
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == '127.0.0.1:5 - "GET /?a=1&token=[redacted]&b=2 HTTP/1.1" 200'
    assert all(TOKEN not in line for line in lines)


def test_the_bound_address_is_a_name_of_the_server_unless_it_is_a_wildcard() -> None:
    assert "fd00::5" in allowed_hosts("fd00::5")
    assert "192.168.1.5" in allowed_hosts("192.168.1.5")
    assert allowed_hosts("0.0.0.0") == allowed_hosts("::") == allowed_hosts(None)
    assert allowed_hosts(None) == {"127.0.0.1", "localhost", "::1"}
