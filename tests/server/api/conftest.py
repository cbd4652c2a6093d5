"""A real app over a real SQLite file per test, driven through Starlette's TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.server.app import create_app
from assay.store import Store

LOCAL = "http://127.0.0.1"
"""The test clients' base URL: the server answers only its own names (``Host`` check)."""


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'server.db'}"


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:
    with TestClient(
        create_app(store_url=db_url), raise_server_exceptions=False, base_url=LOCAL
    ) as test_client:
        yield test_client


@pytest.fixture
def store(client: TestClient) -> Store:
    """The store the app serves (to arrange data directly)."""
    app_store: Store = client.app.state.store  # type: ignore[attr-defined]
    return app_store


def sse_events(text: str) -> list[tuple[str, str]]:
    """(event, data) pairs of an SSE body."""
    events = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith(":")]
        name = next((line[7:] for line in lines if line.startswith("event: ")), None)
        data = next((line[6:] for line in lines if line.startswith("data: ")), None)
        if name is not None and data is not None:
            events.append((name, data))
    return events
