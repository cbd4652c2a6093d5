"""The model cache in the store: the ``ModelCache`` protocol, batched reads, CachedModel."""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa

from assay.models.base import ChatMessage, ModelResponse, ModelSettings
from assay.models.cache import CachedModel, ModelCache
from assay.store import Store, open_store


async def test_get_put_round_trip_and_overwrite(store: Store) -> None:
    cache: ModelCache = store.model_cache()
    assert await cache.get("k1") is None
    value = {"text": "Paris", "usage": {"input_tokens": 3}, "nested": [1, "é", None]}
    await cache.put("k1", value)
    assert await cache.get("k1") == value
    await cache.put("k1", {"text": "London"})  # last write wins
    assert await cache.get("k1") == {"text": "London"}
    assert store.model_cache().count() == 1
    stats = store.model_cache().stats
    assert (stats.hits, stats.misses, stats.writes) == (2, 1, 2)


async def test_entries_persist_across_store_instances(store_url: str) -> None:
    with open_store(store_url) as first:
        await first.model_cache().put("shared", {"text": "kept"})
    with open_store(store_url) as second:
        assert await second.model_cache().get("shared") == {"text": "kept"}
        assert await second.model_cache().get("other") is None


async def test_lookups_in_one_loop_iteration_share_one_query(store: Store) -> None:
    cache = store.model_cache()
    for n in range(20):
        cache.put_raw(f"k{n}", f'{{"n": {n}}}')
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(str(args[2]))

    sa.event.listen(store.engine, "before_cursor_execute", record)
    try:
        found = await asyncio.gather(*(cache.get(f"k{n}") for n in range(25)))
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", record)
    assert found == [{"n": n} for n in range(20)] + [None] * 5
    assert sum("model_cache" in sql for sql in statements) == 1


class _CountingModel:
    model_id = "fake-judge"
    provider = "test"
    base_url = "http://127.0.0.1:1/v1"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        self.calls += 1
        return ModelResponse(text=f"answer to {messages[-1].content}", model_id=self.model_id)


async def test_cached_model_is_served_from_the_store(store: Store) -> None:
    inner = _CountingModel()
    model = CachedModel(inner=inner, cache=store.model_cache())
    settings = ModelSettings(temperature=0.0)
    messages = [ChatMessage(role="user", content="2+2?")]
    first = await model.generate(messages, settings=settings)
    second = await model.generate(messages, settings=settings)
    assert inner.calls == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "answer to 2+2?"
    assert store.model_cache().count() == 1
