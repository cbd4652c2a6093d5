"""The model-call cache: hits without HTTP, policies, temperature rule, keys, a real file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from assay.models.base import ChatMessage, ModelSettings
from assay.models.cache import (
    CachedModel,
    CacheStats,
    MemoryModelCache,
    SQLiteModelCache,
    cache_key,
    cache_policy_from_env,
)
from assay.models.openai_compat import OpenAICompatibleModel
from assay.testing.openai_server import MockOpenAIServer

MESSAGES = [
    ChatMessage(role="system", content="You judge."),
    ChatMessage(role="user", content="Is the sky blue?"),
]
ZERO = ModelSettings(temperature=0.0)


class Answer(BaseModel):
    score: float


def _cached(server: MockOpenAIServer, cache: Any, **kwargs: Any) -> CachedModel:
    inner = OpenAICompatibleModel("mock", base_url=server.base_url, provider="mock")
    return CachedModel(inner, cache=cache, **kwargs)


async def test_second_identical_call_is_served_without_http(
    server: MockOpenAIServer, tmp_path: Path
) -> None:
    store = SQLiteModelCache(tmp_path / "cache.db")
    model = _cached(server, store)
    schema = Answer.model_json_schema()
    first = await model.generate(MESSAGES, schema=schema, settings=ZERO)
    assert len(server.chat_requests) == 1 and first.cached is False
    second = await model.generate(MESSAGES, schema=schema, settings=ZERO)
    assert len(server.chat_requests) == 1  # zero HTTP requests for the hit
    assert second.cached is True and second.attempts == 0 and second.cost_usd == 0.0
    assert second.text == first.text and second.usage == first.usage
    assert (model.stats.hits, model.stats.misses, model.stats.writes) == (1, 1, 1)
    assert (store.stats.hits, store.stats.misses) == (1, 1)
    assert "1 hits, 1 misses" in str(model.stats)


async def test_read_only_reads_but_never_writes(server: MockOpenAIServer) -> None:
    store = MemoryModelCache()
    reader = _cached(server, store, policy="read-only")
    await reader.generate(MESSAGES, settings=ZERO)
    await reader.generate(MESSAGES, settings=ZERO)
    assert len(server.chat_requests) == 2 and len(store) == 0
    # an entry written by someone else is used
    await _cached(server, store).generate(MESSAGES, settings=ZERO)
    assert len(server.chat_requests) == 3 and len(store) == 1
    hit = await reader.generate(MESSAGES, settings=ZERO)
    assert hit.cached is True and len(server.chat_requests) == 3


async def test_off_bypasses_the_cache(server: MockOpenAIServer) -> None:
    store = MemoryModelCache()
    model = _cached(server, store, policy="off")
    await model.generate(MESSAGES, settings=ZERO)
    response = await model.generate(MESSAGES, settings=ZERO)
    assert response.cached is False
    assert len(server.chat_requests) == 2
    assert len(store) == 0 and store.stats.lookups == 0 and model.stats.bypassed == 2


async def test_sampled_calls_are_cached_only_when_asked(server: MockOpenAIServer) -> None:
    store = MemoryModelCache()
    warm = ModelSettings(temperature=0.7)
    default = _cached(server, store)
    for settings in (warm, None, ModelSettings()):  # None: the provider's default temperature
        await default.generate(MESSAGES, settings=settings)
        await default.generate(MESSAGES, settings=settings)
    assert len(server.chat_requests) == 6 and len(store) == 0
    assert default.stats.bypassed == 6

    asked = _cached(server, store, cache_nonzero_temperature=True)
    await asked.generate(MESSAGES, settings=warm)
    hit = await asked.generate(MESSAGES, settings=warm)
    assert hit.cached is True and len(server.chat_requests) == 7


async def test_cache_survives_a_new_process(server: MockOpenAIServer, tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from assay.models.base import ChatMessage, ModelSettings
        from assay.models.cache import CachedModel, SQLiteModelCache
        from assay.models.openai_compat import OpenAICompatibleModel

        async def main() -> None:
            inner = OpenAICompatibleModel("mock", base_url=sys.argv[1], provider="mock")
            model = CachedModel(inner, cache=SQLiteModelCache(sys.argv[2]))
            r = await model.generate(
                [ChatMessage(role="user", content="persist me")],
                settings=ModelSettings(temperature=0),
            )
            print(json.dumps({"cached": r.cached, "text": r.text}))

        asyncio.run(main())
        """
    )
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script, server.base_url, str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ},
            check=True,
        )
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0] == {"cached": False, "text": "ok"}
    assert outputs[1] == {"cached": True, "text": "ok"}
    assert len(server.chat_requests) == 1
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(model_cache)")]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        (count,) = conn.execute("SELECT COUNT(*) FROM model_cache").fetchone()
    assert columns == ["key", "response", "created_at"]
    assert mode == "wal" and count == 1


def _key(**overrides: Any) -> str:
    base: dict[str, Any] = {
        "provider": "openai",
        "base_url": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "messages": MESSAGES,
        "schema": Answer.model_json_schema(),
        "settings": ZERO,
    }
    base.update(overrides)
    return cache_key(**base)


def test_key_changes_with_everything_that_changes_the_answer() -> None:
    reference = _key()
    assert len(reference) == 64 and reference == _key()
    variants = [
        _key(provider="openrouter"),
        _key(base_url="http://localhost:8000/v1"),
        _key(model="gpt-4o"),
        _key(messages=[*MESSAGES[:1], ChatMessage(role="user", content="Is the sky green?")]),
        _key(messages=[ChatMessage(role="user", content=m.content) for m in MESSAGES]),
        _key(schema={"type": "object", "properties": {"score": {"type": "integer"}}}),
        _key(schema=None),
        _key(settings=ModelSettings(temperature=0.0, seed=1)),
        _key(settings=ModelSettings(temperature=0.0, max_output_tokens=10)),
        _key(extra={"extra_body": {"reasoning_effort": "low"}}),
    ]
    assert len({reference, *variants}) == len(variants) + 1
    # what cannot change the answer does not change the key
    assert _key(settings=ModelSettings(temperature=0.0, timeout_s=5)) == reference
    assert _key(base_url="https://api.openai.com/v1/") == reference


async def test_different_requests_do_not_share_entries(server: MockOpenAIServer) -> None:
    store = MemoryModelCache()
    model = _cached(server, store)
    await model.generate(MESSAGES, settings=ZERO)
    await model.generate(MESSAGES, schema=Answer.model_json_schema(), settings=ZERO)
    await model.generate(MESSAGES, settings=ModelSettings(temperature=0.0, seed=3))
    other = OpenAICompatibleModel("other-model", base_url=server.base_url, provider="mock")
    await CachedModel(other, cache=store).generate(MESSAGES, settings=ZERO)
    assert len(server.chat_requests) == 4 and len(store) == 4


class _BrokenCache:
    async def get(self, key: str) -> dict[str, Any] | None:
        raise OSError("disk on fire")

    async def put(self, key: str, value: dict[str, Any]) -> None:
        raise OSError("disk on fire")


async def test_a_broken_cache_never_fails_the_call(server: MockOpenAIServer) -> None:
    model = _cached(server, _BrokenCache())
    response = await model.generate(MESSAGES, settings=ZERO)
    assert response.text == "ok" and model.stats.errors == 2


async def test_default_store_follows_assay_cache_path(
    server: MockOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "from-env.db"
    monkeypatch.setenv("ASSAY_CACHE_PATH", str(target))
    model = _cached(server, None)
    assert isinstance(model.cache, SQLiteModelCache) and model.cache.path == target.resolve()
    await model.generate(MESSAGES, settings=ZERO)
    assert target.exists() and model.cache.count() == 1


def test_cache_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_policy_from_env() == "read-write"
    for raw, expected in [("off", "off"), ("READ-ONLY", "read-only"), ("0", "off")]:
        monkeypatch.setenv("ASSAY_CACHE", raw)
        assert cache_policy_from_env() == expected
    monkeypatch.setenv("ASSAY_CACHE", "sometimes")
    with pytest.raises(ValueError, match="ASSAY_CACHE"):
        cache_policy_from_env()
    with pytest.raises(ValueError):
        CachedModel(OpenAICompatibleModel("m", base_url="http://x/v1"), policy="never")  # type: ignore[arg-type]


async def test_writes_of_one_loop_iteration_share_one_transaction(tmp_path: Path) -> None:
    """Answers arriving together are written in one batch (one worker-thread hop and one
    commit, not one per answer), and each ``put`` returns only once its entry is stored."""
    import asyncio

    batches: list[int] = []

    class Counting(SQLiteModelCache):
        def put_many(self, entries: list[tuple[str, str]]) -> None:
            batches.append(len(entries))
            super().put_many(entries)

    cache = Counting(tmp_path / "cache.db", memory_entries=0)
    await asyncio.gather(*(cache.put(f"k{n}", {"n": n}) for n in range(50)))
    assert batches == [50]
    assert cache.count() == 50
    fresh = SQLiteModelCache(tmp_path / "cache.db")  # nothing held in memory: from the file
    assert [await fresh.get(f"k{n}") for n in (0, 49)] == [{"n": 0}, {"n": 49}]
    await cache.put("k0", {"n": "again"})  # last write wins
    assert batches == [50, 1]
    assert await SQLiteModelCache(tmp_path / "cache.db").get("k0") == {"n": "again"}


async def test_an_answer_is_written_behind_the_call_and_visible_at_once(
    server: MockOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CachedModel`` does not wait for the commit: the answer is queued for the file's
    writer thread, every cache object of the file sees it meanwhile, and ``count`` (like
    ``flush``, ``close`` and interpreter exit) writes what is queued."""
    monkeypatch.setattr("assay.models.cache.WRITE_DELAY_S", 30.0)  # the thread stays asleep
    db = tmp_path / "behind.db"
    model = _cached(server, SQLiteModelCache(db))
    await model.generate(MESSAGES, settings=ZERO)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM model_cache").fetchone() == (0,)
    other = _cached(server, SQLiteModelCache(db, memory_entries=0))  # nothing in memory
    hit = await other.generate(MESSAGES, settings=ZERO)
    assert hit.cached is True and len(server.chat_requests) == 1
    assert SQLiteModelCache(db).count() == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM model_cache").fetchone() == (1,)


async def test_an_unreadable_cache_file_is_a_miss_not_a_failure(
    server: MockOpenAIServer, tmp_path: Path
) -> None:
    db = tmp_path / "garbage.db"
    db.write_bytes(b"this is not a database" * 100)
    model = _cached(server, SQLiteModelCache(db))
    response = await model.generate(MESSAGES, settings=ZERO)
    assert response.text == "ok" and response.cached is False
    assert model.stats.errors == 1 and model.stats.misses == 1


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        try:
            return int(conn.execute("SELECT COUNT(*) FROM model_cache").fetchone()[0])
        except sqlite3.OperationalError:  # not created yet
            return 0


def _eventually(condition: Any, seconds: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_writer_thread_writes_on_its_own_and_ends_when_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("assay.models.cache.WRITE_DELAY_S", 0.01)
    monkeypatch.setattr("assay.models.cache.WRITER_IDLE_S", 0.1)
    db = tmp_path / "idle.db"
    cache = SQLiteModelCache(db)
    cache.put_nowait("a", {"n": 1})
    assert cache.writer.running
    assert _eventually(lambda: _rows(db) == 1)  # nobody flushed: the thread wrote it
    assert _eventually(lambda: not cache.writer.running)
    cache.put_nowait("b", {"n": 2})  # a new thread for the new work
    assert cache.writer.running
    assert _eventually(lambda: _rows(db) == 2)


def test_cache_stats_as_dict_names_every_counter_with_its_value() -> None:
    stats = CacheStats(hits=5, misses=4, writes=3, bypassed=2, errors=1)
    assert stats.as_dict() == {"hits": 5, "misses": 4, "writes": 3, "bypassed": 2, "errors": 1}
