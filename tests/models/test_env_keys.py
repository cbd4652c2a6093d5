"""``models.env_keys``: under a guard, an explicit base URL gets the environment's keys only
when the guard allows it; without one nothing changes."""

from __future__ import annotations

import asyncio

import pytest

from assay.models.env_keys import env_key_guard, env_keys_allowed
from assay.models.openai_compat import NO_KEY_PLACEHOLDER, OpenAICompatibleModel
from assay.models.providers import build_model

URL = "http://127.0.0.1:9/v1"


def _inner(model: object) -> OpenAICompatibleModel:
    while not isinstance(model, OpenAICompatibleModel):
        model = model.inner  # type: ignore[attr-defined]
    return model


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ASSAY_CACHE", "off")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_without_a_guard_an_explicit_url_gets_the_key() -> None:
    assert env_keys_allowed(URL)
    assert _inner(build_model("openai", "m", base_url=URL))._api_key_value() == "sk-env"


def test_a_guard_withholds_the_key_from_urls_it_does_not_allow() -> None:
    with env_key_guard(lambda url: url.startswith("https://gw.internal")):
        refused = _inner(build_model("openai", "m", base_url=URL))
        listed = _inner(build_model("openai", "m", base_url="https://gw.internal/v1"))
        default = _inner(build_model("openai", "m"))  # the operator's endpoint
    assert refused._api_key_value() == NO_KEY_PLACEHOLDER
    assert listed._api_key_value() == "sk-env"
    assert default._api_key_value() == "sk-env"
    # memoised apart: the same string outside the guard still gets its key
    assert _inner(build_model("openai", "m", base_url=URL))._api_key_value() == "sk-env"


def test_the_guard_follows_tasks_started_under_it() -> None:
    async def main() -> tuple[bool, bool]:
        with env_key_guard(lambda url: False):
            task = asyncio.create_task(asyncio.sleep(0, env_keys_allowed(URL)))
            threaded = asyncio.to_thread(env_keys_allowed, URL)
            return await task, await threaded

    assert asyncio.run(main()) == (False, False)
    assert env_keys_allowed(URL)


def test_a_withheld_key_takes_the_organisation_headers_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-operator")
    with env_key_guard(lambda url: False):
        refused = _inner(build_model("openai", "m", base_url=URL))
    assert "OpenAI-Organization" not in refused._headers(NO_KEY_PLACEHOLDER)
    allowed = _inner(build_model("openai", "m", base_url=URL))
    assert allowed._headers("sk-env")["OpenAI-Organization"] == "org-operator"
