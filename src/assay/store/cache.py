"""The model cache in the store's database (``assay.models.cache.ModelCache``).

Why in the store: with PostgreSQL, every worker of a scaled-out run shares one cache, and
with SQLite the cache travels with the runs it served. The behaviour matches
``SQLiteModelCache``: lookups made in one event-loop iteration share one thread hop and one
``SELECT ... IN (...)`` (a re-run served from the cache makes hundreds of lookups per
second, and a hop per lookup costs more than the query), and recently used entries are kept
in a small in-process LRU.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from assay.models.cache import CacheStats, ModelCache
from assay.store.codec import chunked, now
from assay.store.db import Database
from assay.store.tables import model_cache


@dataclass
class _ReadBatch:
    keys: set[str]
    done: asyncio.Future[dict[str, str]]


class StoreModelCache:
    """JSON responses by key in the ``model_cache`` table."""

    READ_CHUNK = 500

    def __init__(self, db: Database, *, memory_entries: int = 4096) -> None:
        self._db = db
        self.memory_entries = memory_entries
        self.stats = CacheStats()
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _ReadBatch] = (
            weakref.WeakKeyDictionary()
        )

    # ------------------------------------------------------------------ protocol
    async def get(self, key: str) -> dict[str, Any] | None:
        raw = self._memory.get(key)
        if raw is not None:
            self._memory.move_to_end(key)
        else:
            raw = await self._read(key)
            if raw is None:
                self.stats.misses += 1
                return None
            self._remember(key, raw)
        self.stats.hits += 1
        value: dict[str, Any] = json.loads(raw)
        return value

    async def put(self, key: str, value: dict[str, Any]) -> None:
        raw = json.dumps(value, ensure_ascii=False)
        await asyncio.to_thread(self.put_raw, key, raw)
        self._remember(key, raw)
        self.stats.writes += 1

    # ------------------------------------------------------------------ sync side
    def put_raw(self, key: str, raw: str) -> None:
        """Insert or replace one entry (last write wins, like ``INSERT OR REPLACE``)."""
        insert = postgresql.insert if self._db.dialect == "postgresql" else sqlite.insert
        stmt = insert(model_cache).values(key=key, value=raw, created_at=now())
        stmt = stmt.on_conflict_do_update(
            index_elements=[model_cache.c.key],
            set_={"value": stmt.excluded.value, "created_at": stmt.excluded.created_at},
        )
        with self._db.write() as conn:
            conn.execute(stmt)

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The stored text of those ``keys`` that exist."""
        found: dict[str, str] = {}
        with self._db.read() as conn:
            for chunk in chunked(keys, self.READ_CHUNK):
                rows = conn.execute(
                    sa.select(model_cache.c.key, model_cache.c.value).where(
                        model_cache.c.key.in_(chunk)
                    )
                )
                found.update((str(k), str(v)) for k, v in rows)
        return found

    def count(self) -> int:
        with self._db.read() as conn:
            return int(
                conn.execute(sa.select(sa.func.count()).select_from(model_cache)).scalar_one()
            )

    def clear(self) -> None:
        with self._db.write() as conn:
            conn.execute(model_cache.delete())
        self._memory.clear()

    # ------------------------------------------------------------------ batching
    def _remember(self, key: str, raw: str) -> None:
        if self.memory_entries <= 0:
            return
        self._memory[key] = raw
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_entries:
            self._memory.popitem(last=False)

    async def _read(self, key: str) -> str | None:
        loop = asyncio.get_running_loop()
        batch = self._batches.get(loop)
        if batch is None:
            batch = self._batches[loop] = _ReadBatch(set(), loop.create_future())
            loop.call_soon(self._flush, loop, batch)
        batch.keys.add(key)
        rows = await asyncio.shield(batch.done)  # one waiter cancelled: the batch goes on
        return rows.get(key)

    def _flush(self, loop: asyncio.AbstractEventLoop, batch: _ReadBatch) -> None:
        if self._batches.get(loop) is batch:
            del self._batches[loop]
        reading = loop.run_in_executor(None, self.get_many, sorted(batch.keys))
        reading.add_done_callback(lambda source: _settle(batch.done, source))


def _settle(target: asyncio.Future[dict[str, str]], source: asyncio.Future[dict[str, str]]) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif (error := source.exception()) is not None:
        target.set_exception(error)
    else:
        target.set_result(source.result())


if TYPE_CHECKING:

    def _implements_model_cache(cache: StoreModelCache) -> ModelCache:
        """mypy checks here that ``StoreModelCache`` satisfies the model layer's protocol."""
        return cache
