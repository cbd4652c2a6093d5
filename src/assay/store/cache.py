"""The model cache in the store's database (``assay.models.cache.ModelCache``).

Why in the store: with PostgreSQL, every worker of a scaled-out run shares one cache, and
with SQLite the cache travels with the runs it served. Batching and the in-process
LRU come from ``BatchedCache``, shared with ``SQLiteModelCache``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from assay.models.cache import BatchedCache, ModelCache
from assay.store.codec import chunked, now
from assay.store.db import Database
from assay.store.tables import model_cache


class StoreModelCache(BatchedCache):
    """JSON responses by key in the ``model_cache`` table."""

    def __init__(self, db: Database, *, memory_entries: int = 4096) -> None:
        super().__init__(memory_entries=memory_entries)
        self._db = db

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


if TYPE_CHECKING:

    def _implements_model_cache(cache: StoreModelCache) -> ModelCache:
        """mypy checks here that ``StoreModelCache`` satisfies the model layer's protocol."""
        return cache
