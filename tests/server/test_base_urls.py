"""``server.base_urls``: which model endpoints a request may name."""

from __future__ import annotations

import pytest

from assay.server.base_urls import (
    allowed_from_env,
    base_url_allowed,
    base_url_problems,
    is_loopback_url,
)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8765/v1", True),
        ("http://127.1.2.3/v1", True),
        ("https://localhost/v1", True),
        ("http://LOCALHOST:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.0.5:8000/v1", False),
        ("http://127.0.0.1.nip.io/v1", False),  # names are never resolved
        ("http://localhost.evil.com/v1", False),
        ("ftp://127.0.0.1/v1", False),
        ("file:///etc/passwd", False),
        ("127.0.0.1:8000", False),  # no scheme: not a URL the server would call
        ("http://127.0.0.1:99999/v1", False),  # an invalid port
    ],
)
def test_loopback_urls(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback
    assert base_url_allowed(url, []) is loopback


def test_listed_urls_allow_their_origin_and_the_paths_under_theirs() -> None:
    allowed = ["https://gateway.internal/v1/", "http://10.0.0.5:8000"]
    assert base_url_allowed("https://gateway.internal/v1", allowed)
    assert base_url_allowed("https://gateway.internal:443/v1/team-a", allowed)
    assert not base_url_allowed("https://gateway.internal/v2", allowed)
    assert not base_url_allowed("https://gateway.internal/v1x", allowed)
    assert not base_url_allowed("http://gateway.internal/v1", allowed)  # another scheme
    assert not base_url_allowed("https://gateway.internal:8443/v1", allowed)  # another port
    assert base_url_allowed("http://10.0.0.5:8000/anything", allowed)
    assert not base_url_allowed("http://10.0.0.5:8001/v1", allowed)


def test_problems_name_each_field(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {
        "task_base_url": "http://127.0.0.1:1/v1",
        "reflection_base_url": "http://example.com/v1",
        "scorers": ["exact-match", {"type": "faithfulness", "params": {"base_url": "http://x/v1"}}],
    }
    problems = base_url_problems(config, [])
    assert [p.path for p in problems] == ["reflection_base_url", "scorers[1].params.base_url"]
    assert base_url_problems(config, ["http://example.com", "http://x"]) == []
    monkeypatch.setenv("ASSAY_SERVER_ALLOWED_BASE_URLS", " http://a/v1, ,https://b ")
    assert allowed_from_env() == ("http://a/v1", "https://b")
