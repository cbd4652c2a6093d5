"""``server.base_urls``: which model endpoints a request may name, at any depth of any
request body, and which of them receive the server's API keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.operations.scorer_preview import scorer_catalogue
from assay.server.app import create_app
from assay.server.base_urls import (
    ITEM_KEYS,
    TEXT_KEYS,
    allowed_from_env,
    base_url_allowed,
    env_keys_may_go_to,
    is_loopback_url,
    names_endpoint,
    url_problems,
)
from assay.testing.openai_server import MockOpenAIServer
from tests.server.api.conftest import LOCAL

EVIL = "http://evil.example:8080/v1"


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


def test_problems_name_each_field_at_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {
        "task_base_url": "http://127.0.0.1:1/v1",
        "reflection_base_url": "http://example.com/v1",
        "scorers": ["exact-match", {"type": "faithfulness", "params": {"base_url": "http://x/v1"}}],
        "target": {"type": "scorer", "scorer": {"type": "f", "params": {"judge_url": "//x"}}},
        "data": [{"input": "http://example.com/v1", "base_url": "http://example.com"}],
        "candidate": {"system": "See https://example.com for the rules."},  # a text, not a URL
        "extra": {"whatever": ["http://example.com/v1"], "endpoint": 8080},
        "prompt": {"text": "http://example.com", "base_url": "http://example.com/v1"},
    }
    problems = url_problems(config, [])
    assert [p.path for p in problems] == [
        "reflection_base_url",
        "scorers[1].params.base_url",
        "target.scorer.params.judge_url",
        "extra.whatever[0]",
        "extra.endpoint",  # a key that names an endpoint holds a URL or nothing
        "prompt.base_url",  # a text field's URL is content, an endpoint in it is not
    ]
    assert {p.type for p in problems} == {"base_url_not_allowed"}
    listed = ["http://example.com", "http://x"]
    assert [p.path for p in url_problems(config, listed)] == [
        "target.scorer.params.judge_url",
        "extra.endpoint",
    ]
    monkeypatch.setenv("ASSAY_SERVER_ALLOWED_BASE_URLS", " http://a/v1, ,https://b ")
    assert allowed_from_env() == ("http://a/v1", "https://b")


def test_keys_go_only_to_listed_or_operator_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)
    assert not env_keys_may_go_to("http://127.0.0.1:9000/v1", [])  # loopback is not enough
    assert env_keys_may_go_to("https://gw.internal/v1/a", ["https://gw.internal/v1"])
    monkeypatch.setenv("ASSAY_JUDGE_BASE_URL", "http://127.0.0.1:9000/v1/")
    assert env_keys_may_go_to("http://127.0.0.1:9000/v1", [])
    assert not env_keys_may_go_to("http://127.0.0.1:9001/v1", [])


# ---------------------------------------------------------------- every field of every body

CHECKED_BODIES = {"RunRequest", "PreviewRequest", "OptimizeRequest"}
"""Bodies of requests that make the server call a model: the policy walks all of them."""
NO_MODEL_CALLS = {
    "DatasetCreate": "stores a name, a description and metadata",
    "AnnotationInput": "stores a reviewer's label, score and comment",
    "RunChange": "renames a stored run and adds or removes its tags",
    "DatasetRename": "renames a stored dataset",
    "Body_import_dataset_file_api_datasets__name__import_post": "stores uploaded items",
}
"""Bodies that never make the server connect anywhere (so their texts may hold URLs)."""
ITEM_PAYLOADS = {"data", "rows", "train.data", "val.data", "test.data"}
"""Where a body carries evaluation items, which the policy does not walk (texts)."""


def _api_schema() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(
        (Path(__file__).parents[2] / "docs" / "openapi.json").read_text(encoding="utf-8")
    )
    return spec


def _string_paths(
    schema: dict[str, Any], components: dict[str, Any], path: list[str | int], seen: frozenset[str]
) -> Iterator[list[str | int]]:
    """Every path under ``schema`` where a request can put a string (a free-form object
    can hold any key: ``any_key`` and ``base_url`` stand for them)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            yield from _string_paths(components[name], components, path, seen | {name})
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from _string_paths(sub, components, path, seen)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        for name, sub in schema.get("properties", {}).items():
            yield from _string_paths(sub, components, [*path, name], seen)
        extra = schema.get("additionalProperties")
        if extra is True or extra == {}:
            yield [*path, "any_key"]
            yield [*path, "base_url"]
            yield [*path, "any_key", "base_url"]  # free-form values nest
            yield [*path, "any_key", 0]
        elif isinstance(extra, dict):
            yield from _string_paths(extra, components, [*path, "any_key"], seen)
    elif kind == "array":
        yield from _string_paths(schema.get("items", {}), components, [*path, 0], seen)
    elif kind == "string" or (kind is None and not any(k in schema for k in ("anyOf", "oneOf"))):
        yield path


def _fragment(path: list[str | int], value: Any) -> Any:
    for part in reversed(path):
        value = [value] if isinstance(part, int) else {part: value}
    return value


def _item_payload(path: list[str | int]) -> str | None:
    """Where ``path`` enters evaluation items or a text field (not walked), else ``None``."""
    for index, part in enumerate(path):
        items = part in ITEM_KEYS and index + 1 < len(path) and isinstance(path[index + 1], int)
        if items or part in TEXT_KEYS:
            return ".".join(str(p) for p in path[: index + 1])
    return None


def _check_every_string_field(paths: list[list[str | int]]) -> set[str]:
    skipped = set()
    assert paths
    for path in paths:
        payload = _item_payload(path)
        problems = [p.loc for p in url_problems(_fragment(path, EVIL), [])]
        in_items = payload is not None and payload.rsplit(".", 1)[-1] in ITEM_KEYS
        endpoint = isinstance(path[-1], str) and names_endpoint(path[-1])
        if payload is not None and (in_items or not endpoint):
            skipped.add(payload)
            assert problems == [], path
        else:
            assert problems == [path], f"a URL at {path} slips past the policy"
    return skipped


def test_every_request_body_is_classified() -> None:
    """A new endpoint with a body must say whether it makes the server call a model."""
    spec = _api_schema()
    bodies = set()
    for operations in spec["paths"].values():
        for operation in operations.values():
            for content in operation.get("requestBody", {}).get("content", {}).values():
                bodies.add(content["schema"]["$ref"].rsplit("/", 1)[-1])
    assert bodies == CHECKED_BODIES | set(NO_MODEL_CALLS)


@pytest.mark.parametrize("body", sorted(CHECKED_BODIES))
def test_the_policy_reaches_every_string_of_a_request_body(body: str) -> None:
    components = _api_schema()["components"]["schemas"]
    paths = list(_string_paths({"$ref": f"#/{body}"}, components, [], frozenset()))
    skipped = _check_every_string_field(paths)
    items = {path for path in skipped if path.rsplit(".", 1)[-1] in ITEM_KEYS}
    assert items and items <= ITEM_PAYLOADS  # every such body carries items: texts
    texts = {path.rsplit(".", 1)[-1] for path in skipped - items}
    assert texts <= TEXT_KEYS  # and the text fields: nothing else is left out


def test_the_policy_reaches_every_param_of_every_scorer_type() -> None:
    """Typed scorer params (``scorers[i].params``, a scorer target's ``params``)."""
    for entry in scorer_catalogue():
        schema = entry.params_schema
        components = schema.get("$defs", {})
        defs = {"$ref": "#/root"}
        for prefix in (["scorers", 0, "params"], ["target", "scorer", "params"]):
            found = list(_string_paths(defs, {"root": schema, **components}, prefix, frozenset()))
            if found:
                skipped = _check_every_string_field(found)
                assert {path.rsplit(".", 1)[-1] for path in skipped} <= TEXT_KEYS, entry.type


def test_text_fields_and_endpoint_fields_are_apart() -> None:
    assert not [key for key in TEXT_KEYS | ITEM_KEYS if names_endpoint(key)]
    for key in ("base_url", "task_base_url", "judge_endpoint", "api_base", "proxy", "host"):
        assert names_endpoint(key), key


def test_a_url_as_content_is_not_refused(db_url: str) -> None:
    """A check may expect a URL in the answer: that is content, not an endpoint."""
    checks = [
        {"type": "check-equals", "params": {"expected": "https://docs.example.com/a"}},
        {"type": "check-matches", "params": {"regex": "https://\\S+"}},
    ]
    item = {"input": "http://example.com", "output": "https://docs.example.com/a"}
    with TestClient(create_app(store_url=db_url), base_url=LOCAL) as client:
        answer = client.post("/api/runs", json={"data": [item], "scorers": checks})
        assert answer.status_code == 201, answer.text
        events = client.get(f"/api/runs/{answer.json()['run_id']}/events").text
        assert '"status":"completed"' in events


# ---------------------------------------------------------------- end to end


def _body(target: dict[str, Any]) -> dict[str, Any]:
    return {
        "data": [{"input": "q", "expected_output": "a"}],
        "scorers": ["exact-match"],
        "target": target,
    }


@pytest.mark.parametrize(
    "target",
    [
        {"type": "scorer", "scorer": "faithfulness", "params": {"base_url": EVIL}},
        {"type": "scorer", "scorer": {"type": "faithfulness", "params": {"base_url": EVIL}}},
        {"type": "model", "model": "openai/gpt-4o-mini", "prompt": "{{ input }}", "base_url": EVIL},
    ],
)
def test_runs_refuse_a_url_in_every_target_form(db_url: str, target: dict[str, Any]) -> None:
    with TestClient(create_app(store_url=db_url, allowed_base_urls=[]), base_url=LOCAL) as client:
        refused = client.post("/api/runs", json=_body(target))
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"][0]["type"] == "base_url_not_allowed"
        assert client.get("/api/runs").json() == []  # nothing stored


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)
    monkeypatch.setenv("ASSAY_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'server.db'}"


def _authorizations(server: MockOpenAIServer) -> set[str]:
    return {r.headers.get("authorization", "") for r in server.chat_requests}


@pytest.mark.parametrize("listed", [False, True])
def test_env_keys_reach_a_loopback_url_only_when_listed(
    db_url: str, monkeypatch: pytest.MonkeyPatch, listed: bool
) -> None:
    """A real loopback server records the Authorization header of every call the server
    makes for a request: a model target, a judge scorer of a run, a scorer preview."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-secret")
    with MockOpenAIServer() as server:
        allowed = [server.base_url] if listed else []
        judge = {
            "type": "faithfulness",
            "params": {"model": "openai/j", "base_url": server.base_url},
        }
        target = {
            "type": "model",
            "model": "openai/t",
            "prompt": "{{ input }}",
            "base_url": server.base_url,
        }
        app = create_app(store_url=db_url, allowed_base_urls=allowed)
        with TestClient(app, base_url=LOCAL) as client:
            started = client.post(
                "/api/runs",
                json={
                    "data": [{"input": "q", "expected_output": "a", "context": ["c"]}],
                    "scorers": [judge],
                    "target": target,
                },
            )
            assert started.status_code == 201, started.text
            run_id = started.json()["run_id"]
            client.get(f"/api/runs/{run_id}/events")  # until it finished
            preview = client.post(
                "/api/scorers/test",
                json={
                    "scorers": [judge],
                    "rows": [{"input": "q", "output": "a", "context": ["c"]}],
                },
            )
            assert preview.status_code == 200, preview.text
            client.get(f"/api/scorers/test/{preview.json()['test_id']}/events")
        seen = _authorizations(server)
        assert len(server.chat_requests) >= 3  # the target, the run's judge, the preview's judge
    if listed:
        assert seen == {"Bearer sk-operator-secret"}
    else:
        assert all("sk-operator-secret" not in header for header in seen), seen


def test_resume_applies_the_policy_to_the_stored_run(db_url: str) -> None:
    """A run stored with a URL listed then is not resumed by a server that does not list it."""
    gone = "http://evil.invalid/v1"  # .invalid never resolves: the run fails fast
    target = {"type": "model", "model": "openai/t", "prompt": "{{ input }}", "base_url": gone}
    with TestClient(
        create_app(store_url=db_url, allowed_base_urls=[gone]), base_url=LOCAL
    ) as client:
        started = client.post("/api/runs", json=_body(target))
        assert started.status_code == 201, started.text
        run_id = started.json()["run_id"]
        client.get(f"/api/runs/{run_id}/events")
    with TestClient(create_app(store_url=db_url, allowed_base_urls=[]), base_url=LOCAL) as client:
        before = client.get(f"/api/runs/{run_id}").json()
        refused = client.post(f"/api/runs/{run_id}/resume")
        assert refused.status_code == 422, refused.text
        assert [p["field"] for p in refused.json()["detail"]] == ["target.base_url"]
        assert client.get(f"/api/runs/{run_id}").json() == before


def test_an_optimization_sends_no_env_key_to_the_loopback_urls_it_names(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Task and reflection calls (GEPA's own thread included) go to the request's loopback
    URLs without the operator's key."""
    from tests.server.optimize_mock import optimize_body, responder

    monkeypatch.setenv("ASSAY_API_KEY", "sk-operator-secret")
    monkeypatch.setenv("ASSAY_SERVER_DATA_DIR", str(tmp_path / "data"))
    with MockOpenAIServer(responder=responder) as server:
        app = create_app(store_url=db_url, allowed_base_urls=[])
        with TestClient(app, base_url=LOCAL) as client:
            body = optimize_body(server.base_url, budget={"max_metric_calls": 20})
            answer = client.post("/api/optimize", json=body)
            assert answer.status_code == 202, answer.text
            events = client.get(answer.json()["events_url"]).text
            assert "event: result" in events
        models = {r.body.get("model") for r in server.chat_requests}
        seen = _authorizations(server)
    assert models == {"task", "reflect"}  # both kinds of call happened
    assert all("sk-operator-secret" not in header for header in seen), seen
