"""A cache of model calls: the same request to the same endpoint is answered once.

Why: re-running an evaluation (a new scorer on old items, a crashed run resumed, a report
rebuilt) should not pay for — or wait for — judge calls it has already made. But a stale
answer credited to a changed judge is worse than no cache (see the field lessons), so the
key fingerprints everything that can change the answer: provider, base URL, model,
messages, JSON schema, sampling settings (``timeout_s`` excluded: it changes when an answer
arrives, not which) and the model's ``cache_identity`` (extra request fields). The scorer
type, params and prompt template version reach the key through the messages and schema
they produce.

Policies: ``"read-write"`` (default) looks up and stores; ``"read-only"`` looks up but never
stores (replay a shared cache without growing it); ``"off"`` bypasses it. A call at
temperature > 0 — or at the provider's default temperature (``None``), which is usually 1 —
is sampled, and caching it would freeze one sample and hide a judge's instability, so it is
neither read nor written unless ``cache_nonzero_temperature=True``.

Storage sits behind the small ``ModelCache`` protocol (async ``get``/``put`` of JSON
objects), so the project's database store can provide it. ``SQLiteModelCache`` is the
default: one SQLite file (``.assay/cache.db`` under the current directory unless
``ASSAY_CACHE_PATH`` says otherwise) in WAL mode, table
``model_cache(key TEXT PRIMARY KEY, response TEXT, created_at REAL)``, with the stdlib
``sqlite3``. Several processes may share the file. A broken cache never fails a call: read
errors count as misses, write errors are counted and logged.

How the SQLite cache stays off a judge call's critical path
(``benchmarks/judge_throughput.py``): a lookup is one primary-key ``SELECT`` on the event
loop's thread (≈ 20–30 µs, a WAL reader never waits for a writer; a separate read connection
with a short busy timeout, and a lookup that still finds the file locked goes to a worker
thread), and ``CachedModel`` hands a new answer to the file's writer thread (``put_nowait``)
instead of waiting for its commit: a worker-thread hop per lookup and per write would add
milliseconds to every judge call on a busy machine (a woken thread waits for the GIL). A
queued entry is visible at once to every cache object of the same file in this process
(looked up before the file), it is written within ``WRITE_DELAY_S`` in one transaction with
the others queued meanwhile, and ``count``/``clear``/``close``/``flush``, ``get_many`` and
interpreter exit write what is queued first. The awaited ``put`` still returns only once its
entry is stored.

A cache hit is returned with ``cached=True``, ``attempts=0``, ``cost_usd=0.0`` and the
original ``usage`` (what the answer cost when it was made). ``n`` and ``stop`` are settings,
so they are in the key, and a hit returns every sample. Loglikelihood requests
(``loglikelihood``, ``loglikelihood_rolling``) are cached too, one entry per
(context, continuation) or text under a separate key (``scoring_key``); logprobs are
deterministic, so they are cached whatever the temperature. Hits, misses, writes, bypassed
calls and errors are counted on ``CachedModel.stats`` and on the store's ``stats``.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    Model,
    ModelResponse,
    ModelSettings,
    unsupported,
)
from assay.models.wrapper import PassThrough

CachePolicy = Literal["read-write", "read-only", "off"]
CACHE_POLICIES: tuple[CachePolicy, ...] = ("read-write", "read-only", "off")
CACHE_ENV = "ASSAY_CACHE"
CACHE_PATH_ENV = "ASSAY_CACHE_PATH"
DEFAULT_CACHE_PATH = Path(".assay") / "cache.db"
KEY_VERSION = 1

log = logging.getLogger(__name__)


@dataclass
class CacheStats:
    """Counters of cache use."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    bypassed: int = 0
    errors: int = 0

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.lookups if self.lookups else None

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def __str__(self) -> str:
        rate = f" ({self.hit_rate:.0%} hit rate)" if self.hit_rate is not None else ""
        return f"cache: {self.hits} hits, {self.misses} misses, {self.writes} writes{rate}"


@runtime_checkable
class ModelCache(Protocol):
    """Where cached responses live: JSON objects by key."""

    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def put(self, key: str, value: dict[str, Any]) -> None: ...


def cache_policy_from_env(default: CachePolicy = "read-write") -> CachePolicy:
    """``ASSAY_CACHE`` as a policy (``off``/``read-write``/``read-only``)."""
    raw = os.environ.get(CACHE_ENV, "").strip().lower()
    if not raw:
        return default
    aliases: dict[str, CachePolicy] = {"0": "off", "false": "off", "no": "off", "on": "read-write"}
    policy = aliases.get(raw, raw)
    if policy not in CACHE_POLICIES:
        raise ValueError(f"{CACHE_ENV}={raw!r}: expected one of {', '.join(CACHE_POLICIES)}")
    return policy


def cache_key(
    *,
    provider: str | None,
    base_url: str | None,
    model: str,
    messages: list[ChatMessage],
    schema: dict[str, Any] | None,
    settings: ModelSettings | None,
    extra: dict[str, Any] | None = None,
) -> str:
    """The sha256 fingerprint of a request (hex)."""
    payload = {
        "v": KEY_VERSION,
        "provider": provider,
        "base_url": base_url.rstrip("/") if base_url else None,
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "schema": schema,
        "settings": settings.model_dump(exclude_none=True, exclude={"timeout_s"})
        if settings is not None
        else {},
        "extra": extra or {},
    }
    canonical = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def scoring_key(
    operation: str,
    *,
    provider: str | None,
    base_url: str | None,
    model: str,
    payload: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> str:
    """The sha256 fingerprint of a scoring request (loglikelihoods), apart from chat keys."""
    canonical = json.dumps(
        {
            "v": KEY_VERSION,
            "op": operation,
            "provider": provider,
            "base_url": base_url.rstrip("/") if base_url else None,
            "model": model,
            "payload": payload,
            "extra": extra or {},
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def is_deterministic(settings: ModelSettings | None) -> bool:
    """Temperature explicitly 0 (``None`` means the provider default, usually > 0)."""
    return settings is not None and settings.temperature == 0.0


# ---------------------------------------------------------------------- stores
class MemoryModelCache:
    """An in-process cache (tests, one-off scripts)."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self.stats = CacheStats()

    async def get(self, key: str) -> dict[str, Any] | None:
        raw = self._data.get(key)
        if raw is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        value: dict[str, Any] = json.loads(raw)
        return value

    async def put(self, key: str, value: dict[str, Any]) -> None:
        self._data[key] = json.dumps(value)
        self.stats.writes += 1

    def __len__(self) -> int:
        return len(self._data)


class BatchedCache:
    """The shared half of the persistent caches: JSON values by key, an in-process LRU, and
    batched reads. Subclasses store text and implement ``get_many`` and ``put_raw``
    (blocking; called in worker threads).

    Lookups made in one event-loop iteration share one thread hop and one
    ``SELECT ... IN (...)``: at hundreds of hits per second (a re-run served from the cache)
    a hop per hit costs more than the query, and it is what makes a cached run slow. Writes
    are batched the same way (one hop and one transaction for the answers that arrived in one
    iteration; ``put`` returns once its entry is stored): a first run at 300 judge calls per
    second otherwise wakes a worker thread per answer, which on a busy machine costs more CPU
    than the call itself.
    Entries this process has read or written stay in the LRU (``memory_entries``, default
    4096) so a re-run in the same process does not pay a hop per hit; the database stays the
    source of truth for other processes.
    """

    READ_CHUNK = 500
    """Keys per ``SELECT ... IN (...)`` (SQLite's bound-variable limit is 999 on old builds)."""

    def __init__(self, *, memory_entries: int = 4096) -> None:
        self._memory: OrderedDict[str, str] = OrderedDict()
        self.memory_entries = memory_entries
        self.stats = CacheStats()
        self._batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _ReadBatch] = (
            weakref.WeakKeyDictionary()
        )
        self._writes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _WriteBatch] = (
            weakref.WeakKeyDictionary()
        )

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The stored text of those ``keys`` that exist (blocking)."""
        raise NotImplementedError

    def put_raw(self, key: str, raw: str) -> None:
        """Insert or replace one entry, last write wins (blocking)."""
        raise NotImplementedError

    def put_many(self, entries: list[tuple[str, str]]) -> None:
        """Insert or replace several entries, in order (blocking); one transaction where the
        store can (override it), else one ``put_raw`` each."""
        for key, raw in entries:
            self.put_raw(key, raw)

    write_behind = False
    """Whether ``put_nowait`` is available: an answer is queued for writing, not awaited."""

    def put_nowait(self, key: str, value: dict[str, Any] | str) -> None:
        """Queue ``value`` (a JSON object, or its text) for writing and return at once
        (stores with ``write_behind``)."""
        raise NotImplementedError(f"{type(self).__name__} writes only through put()")

    def read_now(self, key: str) -> tuple[bool, str | None]:
        """``(True, text or None)`` when the store can answer ``key`` without a thread hop,
        ``(False, None)`` when it cannot (then the batched read in a worker thread does)."""
        del key
        return False, None

    async def get(self, key: str) -> dict[str, Any] | None:
        raw = self._memory.get(key)
        if raw is not None:
            self._memory.move_to_end(key)
        else:
            answered, raw = self.read_now(key)
            if not answered:
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
        loop = asyncio.get_running_loop()
        batch = self._writes.get(loop)
        if batch is None:
            batch = self._writes[loop] = _WriteBatch([], loop.create_future())
            loop.call_soon(self._flush_writes, loop, batch)
        batch.entries.append((key, raw))
        await asyncio.shield(batch.done)  # one waiter cancelled: the batch is still written
        self._remember(key, raw)
        self.stats.writes += 1

    def _flush_writes(self, loop: asyncio.AbstractEventLoop, batch: _WriteBatch) -> None:
        if self._writes.get(loop) is batch:
            del self._writes[loop]
        writing = loop.run_in_executor(None, self.put_many, batch.entries)
        writing.add_done_callback(lambda source: _settle(batch.done, source))

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


class SQLiteModelCache(BatchedCache):
    """Responses in one SQLite file (WAL), created on first use. Lookups run on the calling
    thread, answers given to ``put_nowait`` are written by the file's writer thread (see the
    module docstring)."""

    TABLE = "model_cache"
    READ_TIMEOUT_S = 0.05
    """Busy timeout of the event-loop-side read connection: past it, the worker thread reads."""
    write_behind = True

    def __init__(self, path: str | Path | None = None, *, memory_entries: int = 4096) -> None:
        super().__init__(memory_entries=memory_entries)
        self.path = Path(path) if path is not None else default_cache_path()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._writer: _Writer | None = None

    @property
    def writer(self) -> _Writer:
        """The writer thread's queue for this file (shared by every cache object of it)."""
        if self._writer is None:
            self._writer = _writer_for(self.path, self.TABLE)
        return self._writer

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = _open_sqlite(self.path, self.TABLE, timeout=10.0)
        return self._conn

    def read_now(self, key: str) -> tuple[bool, str | None]:
        queued = self.writer.queued(key)
        if queued is not None:
            return True, queued
        try:
            with self._read_lock:
                if self._reader is None:
                    self._reader = _open_sqlite(self.path, self.TABLE, timeout=self.READ_TIMEOUT_S)
                row = self._reader.execute(
                    f"SELECT response FROM {self.TABLE} WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error:  # locked past the short timeout, or worse: the worker decides
            return False, None
        return True, None if row is None else str(row[0])

    def put_nowait(self, key: str, value: dict[str, Any] | str) -> None:
        raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        self.writer.add(key, raw)
        self._remember(key, raw)
        self.stats.writes += 1

    def flush(self) -> None:
        """Write what ``put_nowait`` queued for this file (blocking)."""
        self.writer.flush()

    def get_many(self, keys: list[str]) -> dict[str, str]:
        self.flush()
        found: dict[str, str] = {}
        with self._lock:
            conn = self._connect()
            for start in range(0, len(keys), self.READ_CHUNK):
                chunk = keys[start : start + self.READ_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, response FROM {self.TABLE} WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update((str(k), str(v)) for k, v in rows)
        return found

    def put_raw(self, key: str, raw: str) -> None:
        self.put_many([(key, raw)])

    def put_many(self, entries: list[tuple[str, str]]) -> None:
        with self._lock:
            _insert(self._connect(), self.TABLE, entries)

    def count(self) -> int:
        self.flush()
        with self._lock:
            row = self._connect().execute(f"SELECT COUNT(*) FROM {self.TABLE}").fetchone()
        return int(row[0])

    def clear(self) -> None:
        self.flush()
        with self._lock:
            self._connect().execute(f"DELETE FROM {self.TABLE}")
        self._memory.clear()

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None


def _open_sqlite(path: Path, table: str, *, timeout: float) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {table} ("
        "key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at REAL NOT NULL)"
    )
    return conn


def _insert(conn: sqlite3.Connection, table: str, entries: list[tuple[str, str]]) -> None:
    """Insert or replace ``entries`` in one transaction, in order (last write wins)."""
    stamp = time.time()
    conn.execute("BEGIN")
    try:
        conn.executemany(
            f"INSERT OR REPLACE INTO {table} (key, response, created_at) VALUES (?, ?, ?)",
            [(key, raw, stamp) for key, raw in entries],
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


WRITE_DELAY_S = 0.05
"""How long the writer thread gathers queued answers before one transaction writes them."""
WRITER_IDLE_S = 10.0
"""A writer thread with nothing to write for this long ends (a process that used many cache
files, such as a test session, does not keep a thread per file)."""


class _Writer:
    """The answers queued for one SQLite file, written by one daemon thread.

    ``add`` queues (a key queued again keeps its latest value) and starts the thread when
    none runs; the thread wakes, waits ``WRITE_DELAY_S`` so answers arriving meanwhile share
    the transaction, writes, and ends after ``WRITER_IDLE_S`` without work. An
    entry leaves the queue only once written (so ``queued`` answers lookups until the file
    does). A failed write is logged and its entries dropped (a cache, not a record)."""

    def __init__(self, path: Path, table: str) -> None:
        self.path = path
        self.table = table
        self.errors = 0
        self._queue: dict[str, str] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None

    def add(self, key: str, raw: str) -> None:
        with self._lock:
            self._queue.pop(key, None)
            self._queue[key] = raw
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="assay-cache-writer", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def queued(self, key: str) -> str | None:
        if not self._queue:  # the common case, without the lock
            return None
        with self._lock:
            return self._queue.get(key)

    def flush(self) -> None:
        """Write everything queued now (blocking; any thread)."""
        with self._write_lock:
            with self._lock:
                entries = list(self._queue.items())
            if not entries:
                return
            try:
                if self._conn is None:
                    self._conn = _open_sqlite(self.path, self.table, timeout=10.0)
                _insert(self._conn, self.table, entries)
            except Exception as exc:  # a broken cache must not fail anything
                self.errors += len(entries)
                log.warning("model cache write failed (%d entries): %s", len(entries), exc)
            with self._lock:
                for key, raw in entries:
                    if self._queue.get(key) is raw:
                        del self._queue[key]

    def _run(self) -> None:
        while True:
            if not self._wake.wait(WRITER_IDLE_S):
                with self._lock:  # nothing to write for a while: end (``add`` starts another)
                    if not self._queue:
                        self._thread = None
                        return
                continue
            time.sleep(WRITE_DELAY_S)
            self._wake.clear()
            self.flush()

    @property
    def running(self) -> bool:
        return self._thread is not None


_WRITERS: dict[tuple[Path, str], _Writer] = {}
_WRITERS_LOCK = threading.Lock()


def _writer_for(path: Path, table: str) -> _Writer:
    """The process-wide writer of ``path`` (one per file, whichever cache object queues)."""
    key = (path.resolve(), table)
    writer = _WRITERS.get(key)
    if writer is None:
        with _WRITERS_LOCK:
            writer = _WRITERS.get(key)
            if writer is None:
                writer = _WRITERS[key] = _Writer(key[0], table)
    return writer


@atexit.register
def _flush_writers_at_exit() -> None:
    for writer in list(_WRITERS.values()):
        writer.flush()


@dataclass
class _ReadBatch:
    """Keys looked up in one event-loop iteration, and the future of their rows."""

    keys: set[str]
    done: asyncio.Future[dict[str, str]]


@dataclass
class _WriteBatch:
    """Entries written in one event-loop iteration, and the future of their commit."""

    entries: list[tuple[str, str]]
    done: asyncio.Future[None]


def _settle(target: asyncio.Future[Any], source: asyncio.Future[Any]) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif (error := source.exception()) is not None:
        target.set_exception(error)
    else:
        target.set_result(source.result())


def default_cache_path() -> Path:
    """``ASSAY_CACHE_PATH``, else ``.assay/cache.db`` under the current directory."""
    raw = os.environ.get(CACHE_PATH_ENV)
    return Path(raw).expanduser() if raw else Path.cwd() / DEFAULT_CACHE_PATH


_DEFAULT_STORES: dict[Path, SQLiteModelCache] = {}


def default_cache(path: str | Path | None = None) -> SQLiteModelCache:
    """The process-wide SQLite cache of ``path`` (default: ``default_cache_path()``)."""
    resolved = (Path(path) if path is not None else default_cache_path()).resolve()
    store = _DEFAULT_STORES.get(resolved)
    if store is None:
        store = _DEFAULT_STORES[resolved] = SQLiteModelCache(resolved)
    return store


_FRESH_SAMPLES: ContextVar[bool] = ContextVar("assay_fresh_samples", default=False)

SHARED_CACHE: ContextVar[ModelCache | None] = ContextVar("assay_shared_cache", default=None)
"""The cache every ``CachedModel`` that caches at all uses in this context, instead of its
own (a worker of a scaled-out run sets the store's ``model_cache``: a call another worker
made is a hit). Keys are unchanged: the model's identity and request, as always."""


@contextmanager
def fresh_samples() -> Iterator[None]:
    """Inside this block (and the tasks it starts) ``CachedModel.generate`` neither reads nor
    writes the cache: every call is a new sample. Repeats of an item are meant to be
    independent samples; answered from the cache they would all be the first answer."""
    token = _FRESH_SAMPLES.set(True)
    try:
        yield
    finally:
        _FRESH_SAMPLES.reset(token)


# ---------------------------------------------------------------------- wrapper
@dataclass
class CachedModel(PassThrough):
    """Wraps a ``Model``: answers repeated requests from ``cache`` (its identity — model id,
    provider, base URL — is the inner model's, see ``PassThrough``)."""

    inner: Model
    cache: ModelCache | None = None
    policy: CachePolicy = "read-write"
    cache_nonzero_temperature: bool = False
    stats: CacheStats = field(default_factory=CacheStats)

    def __post_init__(self) -> None:
        if self.policy not in CACHE_POLICIES:
            raise ValueError(f"cache policy must be one of {', '.join(CACHE_POLICIES)}")
        if self.cache is None and self.policy != "off":
            self.cache = default_cache()

    def active_cache(self) -> ModelCache | None:
        """``SHARED_CACHE`` when set (and this model caches), else its own cache."""
        shared = SHARED_CACHE.get()
        return shared if shared is not None and self.cache is not None else self.cache

    def key_for(
        self,
        messages: list[ChatMessage],
        schema: dict[str, Any] | None,
        settings: ModelSettings | None,
    ) -> str:
        return cache_key(
            provider=self.provider,
            base_url=self.base_url,
            model=self.model_id,
            messages=messages,
            schema=schema,
            settings=settings,
            extra=self.cache_identity,
        )

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        cache = self.active_cache()
        usable = self.policy != "off" and (
            self.cache_nonzero_temperature or is_deterministic(settings)
        )
        if cache is None or not usable or _FRESH_SAMPLES.get():
            self.stats.bypassed += 1
            return await self.inner.generate(messages, schema=schema, settings=settings)
        started = time.perf_counter()
        key = self.key_for(messages, schema, settings)
        hit = await self._lookup(cache, key)
        if hit is not None:
            self.stats.hits += 1
            return hit.model_copy(
                update={
                    "cached": True,
                    "attempts": 0,
                    "cost_usd": 0.0,
                    "duration_ms": (time.perf_counter() - started) * 1000,
                }
            )
        self.stats.misses += 1
        response = await self.inner.generate(messages, schema=schema, settings=settings)
        if self.policy != "read-write":
            return response
        if isinstance(cache, BatchedCache) and cache.write_behind:
            try:  # the JSON text straight from pydantic: no dict in between
                cache.put_nowait(key, response.model_dump_json())
                self.stats.writes += 1
            except Exception as exc:  # a broken cache must not fail the call
                self.stats.errors += 1
                log.warning("model cache write failed: %s", exc)
        else:
            await self._store(cache, key, response.model_dump(mode="json"))
        return response

    # ------------------------------------------------------------------ loglikelihood
    def loglikelihood_key(self, operation: str, payload: dict[str, Any]) -> str:
        """The cache key of one scoring request (``operation``: ``loglikelihood`` or
        ``loglikelihood_rolling``). Logprobs do not depend on sampling settings, so only
        the endpoint, the model and the text are in it."""
        return scoring_key(
            operation,
            provider=self.provider,
            base_url=self.base_url,
            model=self.model_id,
            payload=payload,
            extra=self.cache_identity,
        )

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        """Cached per request: only the (context, continuation) pairs not in the cache reach
        the inner model, in one batch. Logprobs are deterministic, so every policy but
        ``"off"`` uses the cache whatever the temperature."""
        method = getattr(self.inner, "loglikelihood", None)
        if method is None:
            raise unsupported(self.inner, "loglikelihood")
        pairs = list(requests)
        cache = self.active_cache()
        if cache is None or self.policy == "off":
            self.stats.bypassed += 1
            found: list[Loglikelihood] = await method(pairs, settings=settings)
            return found
        keys = [
            self.loglikelihood_key("loglikelihood", {"context": c, "continuation": x})
            for c, x in pairs
        ]
        results: list[Loglikelihood | None] = []
        # looked up together: the SQLite cache answers one event-loop tick's keys at once
        for data in await asyncio.gather(*(self._lookup_json(cache, key) for key in keys)):
            hit: Loglikelihood | None = None
            if data is not None:
                try:
                    hit = Loglikelihood(float(data["logprob"]), bool(data["is_greedy"]))
                except (KeyError, TypeError, ValueError):
                    self.stats.errors += 1
            results.append(hit)
        missing = [i for i, value in enumerate(results) if value is None]
        self.stats.hits += len(pairs) - len(missing)
        self.stats.misses += len(missing)
        if missing:
            answered: list[Loglikelihood] = await method(
                [pairs[i] for i in missing], settings=settings
            )
            for i, value in zip(missing, answered, strict=True):
                value = Loglikelihood(float(value[0]), bool(value[1]))
                results[i] = value
                await self._store(cache, keys[i], {"logprob": value[0], "is_greedy": value[1]})
        return [value for value in results if value is not None]

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        """The inner model's ``loglikelihood_rolling``, cached by text."""
        method = getattr(self.inner, "loglikelihood_rolling", None)
        if method is None:
            raise unsupported(self.inner, "loglikelihood_rolling")
        cache = self.active_cache()
        if cache is None or self.policy == "off":
            self.stats.bypassed += 1
            return float(await method(text, settings=settings))
        key = self.loglikelihood_key("loglikelihood_rolling", {"text": text})
        data = await self._lookup_json(cache, key)
        if data is not None and isinstance(data.get("logprob"), int | float):
            self.stats.hits += 1
            return float(data["logprob"])
        self.stats.misses += 1
        value = float(await method(text, settings=settings))
        await self._store(cache, key, {"logprob": value})
        return value

    async def _lookup_json(self, cache: ModelCache, key: str) -> dict[str, Any] | None:
        try:
            return await cache.get(key)
        except Exception as exc:  # a broken cache is a miss, never a failure
            self.stats.errors += 1
            log.warning("model cache read failed: %s", exc)
            return None

    async def _store(self, cache: ModelCache, key: str, value: dict[str, Any]) -> None:
        if self.policy != "read-write":
            return
        try:
            if isinstance(cache, BatchedCache) and cache.write_behind:
                cache.put_nowait(key, value)  # written by the file's writer thread
            else:
                await cache.put(key, value)
            self.stats.writes += 1
        except Exception as exc:  # a broken cache must not fail the call
            self.stats.errors += 1
            log.warning("model cache write failed: %s", exc)

    async def _lookup(self, cache: ModelCache, key: str) -> ModelResponse | None:
        try:
            data = await cache.get(key)
            return None if data is None else ModelResponse.model_validate(data)
        except Exception as exc:  # unreadable entry or store: a miss, never a failure
            self.stats.errors += 1
            log.warning("model cache read failed: %s", exc)
            return None
