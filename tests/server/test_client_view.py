"""``server.client_view``: what a client sees of an error a hostile endpoint wrote: capped,
neutralised, without the server's traceback (which the store keeps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.optimize.feed import ErrorUpdate, LogLine, Scoreboard, ScoreboardRow, ScoreCell
from assay.server.app import create_app
from assay.server.client_view import MAX_ERROR_CHARS, MAX_LOG_CHARS, event_for_client, safe_text
from assay.testing.openai_server import MockOpenAIServer, MockReply
from tests.server.api.conftest import LOCAL, sse_events

HOSTILE = "\x1b[31mPWNED\x1b[0m\u202e" + "<script>x</script>" + "A" * 5_000 + "\x00END"


def test_safe_text_caps_and_neutralises() -> None:
    shown = safe_text(HOSTILE)
    assert shown is not None
    assert shown.startswith("\ufffd[31mPWNED\ufffd[0m\ufffd<script>")
    assert len(shown) < MAX_ERROR_CHARS + 80 and "more characters" in shown
    assert "\x1b" not in shown and "\u202e" not in shown and "\x00" not in shown
    assert safe_text("line 1\n\tline 2") == "line 1\n\tline 2"  # layout is kept
    assert safe_text(None) is None


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.setenv("ASSAY_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'server.db'}"


def _shown_everywhere(client: TestClient, run_id: str) -> list[str]:
    """Every text the API and the UI send about the run's one failed item."""
    page = client.get(f"/api/runs/{run_id}/items").json()["items"]
    item = client.get(f"/api/runs/{run_id}/items/a").json()
    exported = [
        json.loads(line) for line in client.get(f"/api/runs/{run_id}/export").text.splitlines()
    ]
    for results in (page, item, exported):
        assert results[0]["error"]["traceback"] is None
    return [
        json.dumps(page),
        json.dumps(item),
        json.dumps(exported),
        client.get(f"/api/runs/{run_id}/export?format=csv").text,
        client.get(f"/runs/{run_id}").text,
        client.get(f"/runs/{run_id}/items/a").text,
    ]


def test_a_hostile_error_body_reaches_clients_capped_and_without_traceback(db_url: str) -> None:
    with MockOpenAIServer() as server:
        server.enqueue(MockReply(status=400, error=HOSTILE))
        target = {
            "type": "model",
            "model": "openai-compatible/m",
            "prompt": "{{ input }}",
            "base_url": server.base_url,
        }
        with TestClient(create_app(store_url=db_url), base_url=LOCAL) as client:
            started = client.post(
                "/api/runs",
                json={
                    "data": [{"id": "a", "input": "q", "expected_output": "x"}],
                    "scorers": ["exact-match"],
                    "target": target,
                },
            )
            assert started.status_code == 201, started.text
            run_id = started.json()["run_id"]
            events = sse_events(client.get(f"/api/runs/{run_id}/events").text)
            assert events[-1][0] == "finished"
            stored = client.app.state.store.runs.results(run_id)  # type: ignore[attr-defined]
            texts = _shown_everywhere(client, run_id)
    [result] = list(stored)
    assert result.error is not None and result.error.traceback  # the store keeps it all
    assert "PWNED" in result.error.message and "A" * 500 in result.error.message
    for text in texts:
        assert "PWNED" in text  # the start of the message is shown...
        assert "A" * (MAX_ERROR_CHARS + 1) not in text  # ...not all of it
        assert "\x1b" not in text and "\\u001b" not in text and "\u202e" not in text
        assert "Traceback" not in text and ".py" not in text


def test_a_hostile_judge_error_in_a_preview_is_capped(db_url: str) -> None:
    with MockOpenAIServer() as server:
        server.enqueue(MockReply(status=400, error=HOSTILE))
        judge = {
            "type": "faithfulness",
            "params": {"model": "openai-compatible/j", "base_url": server.base_url},
        }
        with TestClient(create_app(store_url=db_url), base_url=LOCAL) as client:
            answer = client.post(
                "/api/scorers/test",
                json={
                    "scorers": [judge],
                    "rows": [{"input": "q", "output": "a", "context": ["c"]}],
                },
            )
            assert answer.status_code == 200, answer.text
            stream = client.get(f"/api/scorers/test/{answer.json()['test_id']}/events").text
    results = [json.loads(data) for name, data in sse_events(stream) if name == "result"]
    assert results and results[0]["result"]["status"] == "error"
    assert "PWNED" in stream and "A" * (MAX_ERROR_CHARS + 1) not in stream
    assert "\\u001b" not in stream


def test_optimization_events_carry_capped_errors() -> None:
    cell = ScoreCell(status="error", score=None, normalized=None, reason=HOSTILE)
    fine = ScoreCell(status="ready", score=1.0, normalized=1.0, reason="B" * 2_000)
    row = ScoreboardRow(
        split="val",
        item_id="a",
        input="q",
        expected_output="x",
        output=None,
        score=0.0,
        error=HOSTILE,
        scorers={"judge": cell, "other": fine},
    )
    board = Scoreboard(optimization_id="o", candidate_idx=0, scorers=[], rows=[row])
    shown = event_for_client(board)
    assert isinstance(shown, Scoreboard)
    [shown_row] = shown.rows
    assert shown_row.error is not None and shown_row.error == safe_text(HOSTILE)
    assert shown_row.scorers["judge"].reason == safe_text(HOSTILE)
    assert shown_row.scorers["other"].reason == "B" * 2_000  # a judge's reasoning is no error
    alert = LogLine(optimization_id="o", channel="alerts", iteration=1, message=HOSTILE)
    failed = ErrorUpdate(optimization_id="o", state="failed", message=HOSTILE)
    diff = LogLine(optimization_id="o", channel="prompt", iteration=1, message="C" * 3_000)
    for event in (alert, failed):
        message = event_for_client(event).model_dump()["message"]
        assert "\x1b" not in message and len(message) < MAX_LOG_CHARS + 80
    assert event_for_client(diff) is diff
