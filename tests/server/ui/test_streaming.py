"""The run page is sent in pieces: its head before the store is read, its rows before
they are counted; what fails after the status line is said in the page."""

from __future__ import annotations

import logging

import pytest
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from jinja2 import Environment
from starlette.requests import Request

from assay.server.ui.pages import run_page
from assay.server.ui.streaming import FLUSH, template_pieces
from assay.store import Store


def _request(store: Store, run_id: str, query: bytes = b"") -> Request:
    app = FastAPI()
    app.state.store = store
    scope = {
        "type": "http",
        "method": "GET",
        "path": f"/runs/{run_id}",
        "query_string": query,
        "headers": [],
        "app": app,
    }
    return Request(scope)


async def _pieces(response: StreamingResponse, between: object = None) -> list[str]:
    """The response's pieces; ``between`` (a callable) runs after the first one."""
    pieces: list[str] = []
    async for piece in response.body_iterator:
        pieces.append(piece if isinstance(piece, str) else bytes(piece).decode())
        if len(pieces) == 1 and callable(between):
            between()
    return pieces


async def test_head_rows_then_count(store: Store, runs: dict[str, str]) -> None:
    run_id = runs["good"]
    response = run_page(_request(store, run_id), run_id)
    assert isinstance(response, StreamingResponse)
    assert response.status_code == 200
    head, rows, rest = await _pieces(response)
    # the head: everything up to the items, nothing read from the results yet
    assert 'id="item-filters"' in head and head.rstrip().endswith(FLUSH)
    assert "items-table" not in head and 'data-testid="items-count"' not in head
    # the rows, before their count
    assert head.count("<tbody") == 1  # the summary table's only
    assert 'data-item-id="q1"' in rows and 'data-testid="items-count"' not in rows
    assert '<p data-testid="items-count">6 matching results</p>' in rest
    assert "page 1 of 1" in rest and rest.rstrip().endswith("</html>")


async def test_the_rows_are_read_after_the_head_is_out(
    store: Store, runs: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Deleting the run between the first piece and the next shows the rows are read
    only then; the failure is said in the page (the status is already sent)."""
    run_id = runs["good"]
    response = run_page(_request(store, run_id), run_id)
    assert isinstance(response, StreamingResponse)
    with caplog.at_level(logging.ERROR, logger="assay.server"):
        pieces = await _pieces(response, between=lambda: store.runs.delete(run_id))
    assert len(pieces) == 2
    assert 'data-testid="page-error"' in pieces[1]
    assert run_id in pieces[1] and "items-table" not in pieces[1]
    assert any("while streaming run.html" in r.getMessage() for r in caplog.records)


async def test_refusals_come_before_the_stream(store: Store, runs: dict[str, str]) -> None:
    run_id = runs["good"]
    unknown = run_page(_request(store, "no-such-run"), "no-such-run")
    assert unknown.status_code == 404
    bad = run_page(_request(store, run_id, b"scorer=nope"), run_id, scorer="nope")
    assert bad.status_code == 422 and b"nope&#39; is not in run" in bytes(bad.body)
    assert not isinstance(bad, StreamingResponse)


def test_pieces_end_at_each_flush_and_render_lazily() -> None:
    calls: list[str] = []

    def slow() -> str:
        calls.append("read")
        return "rows"

    template = Environment(autoescape=True).from_string(
        "<head>{{ flush }}<body>{{ slow() }}{{ flush }}<p>{{ '<x>' }}</p>"
    )
    pieces = template_pieces(template, {"flush": FLUSH, "slow": slow})
    assert next(pieces) == f"<head>{FLUSH}"
    assert calls == []  # nothing after the first flush has run yet
    assert next(pieces) == f"<body>rows{FLUSH}"
    assert next(pieces) == "<p>&lt;x&gt;</p>"
    assert list(pieces) == []


def test_an_error_after_the_first_piece_is_one_escaped_paragraph(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail() -> str:
        raise ValueError("bad <value>")

    def crash() -> str:
        raise RuntimeError("secret internals")

    for broken, said in ((fail, "bad &lt;value&gt;"), (crash, "internal error")):
        template = Environment(autoescape=True).from_string("<h1>{{ flush }}{{ broken() }}")
        with caplog.at_level(logging.ERROR, logger="assay.server"):
            first, error = list(template_pieces(template, {"flush": FLUSH, "broken": broken}))
        assert first == f"<h1>{FLUSH}"
        assert said in error and "error id" in error
        assert "secret internals" not in error
