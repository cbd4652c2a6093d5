"""``/api/scorers``: the catalogue, the preview, field-path validation, judge results as SSE."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from assay.testing.openai_server import MockOpenAIServer
from tests.server.api.conftest import sse_events

ROW = {"input": "q", "output": "Paris", "expected_output": "Paris"}


def test_catalogue_lists_every_type_with_schema_and_defaults(client: TestClient) -> None:
    entries = {e["type"]: e for e in client.get("/api/scorers").json()}
    similarity = entries["content-similarity"]
    assert similarity["kind"] == "code"
    assert similarity["defaults"]["ignore_case"] is True
    assert "ignore_case" in similarity["params_schema"]["properties"]
    assert entries["faithfulness"]["kind"] == "judge"
    assert all(e["score_range"] and e["description"] for e in entries.values())


def test_code_scorer_answers_at_once(client: TestClient) -> None:
    body = {
        "scorers": [{"type": "exact-match"}],
        "rows": [ROW, {**ROW, "output": "Lyon"}],
    }
    answer = client.post("/api/scorers/test", json=body)
    assert answer.status_code == 200
    scores = [cell[0]["score"] for cell in answer.json()["results"]]
    assert scores == [1.0, 0.0]


def test_invalid_params_are_422_naming_the_field_path(client: TestClient) -> None:
    body = {
        "scorers": [
            {"type": "exact-match"},
            {"type": "content-similarity", "params": {"ignoreCase": "perhaps", "bogus": 1}},
        ],
        "rows": [ROW],
    }
    answer = client.post("/api/scorers/test", json=body)
    assert answer.status_code == 422
    fields = {problem["field"]: problem["msg"] for problem in answer.json()["detail"]}
    assert set(fields) == {"scorers[1].params.ignore_case", "scorers[1].params.bogus"}
    assert "allowed params" in fields["scorers[1].params.bogus"]


@pytest.mark.parametrize(
    ("regex", "why"),
    [
        ("(", "missing ), unterminated subpattern at position 0"),
        ("a{99999999999}", "the repetition number is too large"),
        ("(" * 5000 + ")" * 5000, "nested too deeply (more than 100 groups)"),
    ],
)
def test_an_invalid_regex_is_422_on_its_field_in_a_preview_and_a_run(
    client: TestClient, regex: str, why: str
) -> None:
    """Issue 25: a regex Python cannot compile (an overflowing repeat, deep nesting as
    well as a syntax error) names its field; it was a 500 for the first two kinds."""
    scorer = {"type": "check-matches", "params": {"regex": regex}}
    for answer in (
        client.post("/api/scorers/test", json={"scorers": [scorer], "rows": [ROW]}),
        client.post("/api/runs", json={"data": [{"id": "1", **ROW}], "scorers": [scorer]}),
    ):
        assert answer.status_code == 422, answer.text
        (problem,) = answer.json()["detail"]
        assert problem["field"] == "scorers[0].params.regex"
        assert problem["msg"] == f"invalid regular expression: {why}"


def test_bad_body_shape_is_422_naming_the_field(client: TestClient) -> None:
    answer = client.post("/api/scorers/test", json={"scorers": [{"type": "exact-match"}]})
    assert answer.status_code == 422
    assert [p["field"] for p in answer.json()["detail"]] == ["rows"]


def test_unknown_scorer_is_404_with_a_suggestion(client: TestClient) -> None:
    answer = client.post(
        "/api/scorers/test", json={"scorers": [{"type": "exact-matc"}], "rows": [ROW]}
    )
    assert answer.status_code == 404
    assert "did you mean 'exact-match'" in answer.json()["detail"]


def test_judge_scorer_is_pending_then_follows_as_events(client: TestClient) -> None:
    with MockOpenAIServer() as server:
        judge = {
            "type": "answer-relevancy",
            "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
        }
        answer = client.post(
            "/api/scorers/test",
            json={"scorers": [{"type": "exact-match"}, judge], "rows": [ROW, ROW]},
        )
        assert answer.status_code == 200
        grid = answer.json()["results"]
        assert [row[1] for row in grid] == [{"status": "pending"}] * 2
        assert [row[0]["status"] for row in grid] == ["ready", "ready"]
        stream = client.get(f"/api/scorers/test/{answer.json()['test_id']}/events")
    events = sse_events(stream.text)
    assert [name for name, _ in events] == ["result", "result", "done"]
    cells = sorted((json.loads(data)["row"], json.loads(data)["scorer"]) for _, data in events[:2])
    assert cells == [(0, 1), (1, 1)]
    results = [json.loads(data)["result"] for _, data in events[:2]]
    assert all(r["scorer_id"] == "answer-relevancy" for r in results)
    assert server.chat_requests  # the judge really asked the model


def test_unknown_test_id_is_404(client: TestClient) -> None:
    assert client.get("/api/scorers/test/nope/events").status_code == 404


def test_preview_base_url_follows_the_policy(client: TestClient) -> None:
    judge = {"type": "faithfulness", "params": {"base_url": "http://metadata.internal/v1"}}
    answer = client.post("/api/scorers/test", json={"scorers": [judge], "rows": [ROW]})
    assert answer.status_code == 422
    (problem,) = answer.json()["detail"]
    assert problem["field"] == "scorers[0].params.base_url"
    assert "ASSAY_SERVER_ALLOWED_BASE_URLS" in problem["msg"]
