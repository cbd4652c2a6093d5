"""Opening the store: which database, how it is configured, and migrating it.

``open_store()`` is the only way in. It resolves the URL (argument, ``ASSAY_DATABASE_URL``,
else ``.assay/assay.db`` under the current directory), configures the engine and brings the
schema to the latest migration before returning, so no caller ever sees an old schema.

Why the lock around migrations: two processes opening a fresh database at once (a run and an
``assay datasets import`` started together, or parallel CI jobs) would both try to create the
tables. On SQLite the migration runs inside ``BEGIN IMMEDIATE`` (the database's write lock;
the second process waits, then finds the schema current); on PostgreSQL inside a session
advisory lock. The schema version is checked first without any lock, so opening an
up-to-date database never waits for another process's long write.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import StaticPool

from assay.extras import require_extra
from assay.store.annotations_repo import AnnotationRepository
from assay.store.cache import StoreModelCache
from assay.store.certificates_repo import CertificateRepository
from assay.store.codec import dumps, loads
from assay.store.compare_statistics_repo import CompareStatisticsRepository
from assay.store.datasets_repo import DatasetRepository
from assay.store.db import WRITE_OPTION, Database, install_sqlite_transactions
from assay.store.errors import StoreUnavailableError, describe_database_error
from assay.store.live_repo import LiveRunRepository
from assay.store.optimizations_repo import OptimizationRepository
from assay.store.run_queries import RunQueries
from assay.store.runs_repo import RunRepository
from assay.store.score_histograms import ScoreHistogramQueries
from assay.store.work_units_repo import WorkUnitRepository

DATABASE_URL_ENV = "ASSAY_DATABASE_URL"
DEFAULT_SQLITE_PATH = Path(".assay") / "assay.db"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_S = 30.0
"""How long an SQLite writer waits for another process's write lock before failing."""
MIGRATION_LOCK_KEY = 0x61737361790001
"""``pg_advisory_lock`` key of assay's migrations ("assay" + 1)."""


def resolve_url(url: str | URL | None = None) -> URL:
    """The database URL: ``url``, else ``$ASSAY_DATABASE_URL``, else the default SQLite file.

    ``postgresql://`` and ``postgres://`` select the psycopg 3 driver; a string without
    ``://`` is taken as the path of an SQLite file. The folder of an SQLite file is created.
    """
    raw: str | URL | None = url if url else os.environ.get(DATABASE_URL_ENV) or None
    if raw is None:
        resolved = URL.create("sqlite", database=str(Path.cwd() / DEFAULT_SQLITE_PATH))
    elif isinstance(raw, str) and "://" not in raw:
        resolved = URL.create("sqlite", database=str(Path(raw).expanduser()))
    else:
        resolved = make_url(raw)
    if resolved.drivername in ("postgresql", "postgres"):
        resolved = resolved.set(drivername="postgresql+psycopg")
    backend = resolved.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ValueError(
            f"unsupported database {resolved.render_as_string(hide_password=True)!r}: "
            "assay stores data in SQLite (sqlite:///path.db) or PostgreSQL (postgresql://...)"
        )
    if backend == "sqlite" and not _is_memory(resolved):
        Path(resolved.database or "").parent.mkdir(parents=True, exist_ok=True)
    return resolved


def _is_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or "mode=memory" in str(url)


def create_store_engine(url: URL) -> Engine:
    """An engine configured for the store (pragmas, lock modes, JSON codec)."""
    options: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": loads}
    if url.get_backend_name() == "sqlite":
        memory = _is_memory(url)
        options["connect_args"] = {"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
        if memory:  # one shared connection, or every thread would see its own empty database
            options["poolclass"] = StaticPool
        engine = create_engine(url, **options)
        install_sqlite_transactions(
            engine, busy_timeout_ms=int(BUSY_TIMEOUT_S * 1000), wal=not memory
        )
        return engine
    if url.get_driver_name() == "psycopg":  # the driver comes with the postgres extra
        require_extra("postgres", "a PostgreSQL store")
    engine = create_engine(url, pool_pre_ping=True, **options)
    event.listen(engine, "connect", _without_jit)
    return engine


def _without_jit(dbapi_connection: Any, _record: Any) -> None:
    """PostgreSQL's JIT off for the store's sessions. The store's reads are index walks
    over a page or a chunk, but the planner estimates a keyset range of a 100,000-row run
    at tens of thousands of rows, which passes ``jit_above_cost``: an export chunk's scores
    query then spent 24 of its 40 ms compiling (issue 25; measured with JIT on and off on
    the same 100,000-item runs: the export's SQL 4.2-4.7 s against 2.3-3.5 s, a compare
    page's rows 528-712 ms against 428-544 ms). Committed, so the pool's reset does not
    roll the setting back."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SET jit = off")
    finally:
        cursor.close()
    dbapi_connection.commit()


def _alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration shipped with this version of assay."""
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def current_revision(engine: Engine) -> str | None:
    """The database's migration (``None``: an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest migration, safely under concurrent opens."""
    if current_revision(engine) == head_revision():
        return
    postgres = engine.dialect.name == "postgresql"
    with engine.connect() as conn:
        if postgres:
            conn.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})")
            conn.commit()
        try:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                command.upgrade(_alembic_config(conn), "head")
        finally:
            if postgres:
                conn.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})")
                conn.commit()


class Store:
    """The database: datasets, runs and the model cache. A context manager; ``close()``
    releases the connections."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._db = Database(engine)
        self.datasets = DatasetRepository(self._db)
        self.runs = RunRepository(self._db)
        self.live = LiveRunRepository(self._db)
        self.certificates = CertificateRepository(self._db)
        self.optimizations = OptimizationRepository(self._db)
        self.annotations = AnnotationRepository(self._db)
        self.run_queries = RunQueries(self._db)
        self.score_histograms = ScoreHistogramQueries(self._db)
        self.work_units = WorkUnitRepository(self._db)
        self.compare_statistics = CompareStatisticsRepository(self._db)
        self._cache: StoreModelCache | None = None

    @property
    def url(self) -> str:
        """The database URL with any password hidden (safe to print)."""
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._db.dialect

    def model_cache(self) -> StoreModelCache:
        """The model cache backed by this database (one instance per store)."""
        if self._cache is None:
            self._cache = StoreModelCache(self._db)
        return self._cache

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"


def open_store(url: str | URL | None = None) -> Store:
    """Open (creating and migrating as needed) the store at ``url``; see ``resolve_url``.

    A database that cannot be used (unsupported URL, unreachable server, a file that is not
    a database, damaged or read-only) raises ``StoreUnavailableError`` with one line naming
    it and what to do, instead of a driver traceback.
    """
    try:
        resolved = resolve_url(url)
    except ValueError as exc:
        raise StoreUnavailableError(str(exc)) from None
    shown = resolved.render_as_string(hide_password=True)
    engine = create_store_engine(resolved)
    try:
        migrate(engine)
    except (sa_exc.DBAPIError, OSError) as exc:
        engine.dispose()
        message = describe_database_error(exc, shown)
        if message is None:
            raise
        raise StoreUnavailableError(message) from exc
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)


@contextmanager
def using_store(store: Store | None) -> Iterator[Store]:
    """``store`` as it is, or the default store opened for this block (and closed after):
    what every operation that takes an optional ``store=`` does."""
    if store is not None:
        yield store
        return
    with open_store() as opened:
        yield opened
