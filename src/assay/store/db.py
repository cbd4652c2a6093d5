"""Transactions: one place that decides how the store reads and writes.

Why a write context distinct from a read context: SQLite's default ``BEGIN`` is *deferred*,
so a transaction that reads first and writes later must upgrade its lock, and if another
connection wrote in between SQLite fails at once with "database is locked" — the busy timeout
does not apply to that upgrade. Writes therefore start with ``BEGIN IMMEDIATE``, which takes
the write lock up front and waits (``busy_timeout``) for it. Reads keep the deferred
``BEGIN``: in WAL mode they never block, and are never blocked by, the writer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, event

WRITE_OPTION = "assay_write"


class Database:
    """An engine plus the two ways the repositories use it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect: str = engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction that holds the write lock from its start (SQLite) and commits on
        success or rolls back on any exception, including one raised by a caller's iterable."""
        with self.engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One read transaction: every query inside sees the same snapshot."""
        with self.engine.connect() as conn, conn.begin():
            yield conn


def install_sqlite_transactions(engine: Engine, *, busy_timeout_ms: int, wal: bool) -> None:
    """Let the store emit ``BEGIN``/``BEGIN IMMEDIATE`` itself and set the per-connection pragmas.

    The stdlib driver otherwise issues its own deferred ``BEGIN`` before the first write (and
    none before reads), which makes both the lock mode and read snapshots impossible to
    control; SQLAlchemy documents this recipe for pysqlite.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            if wal:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
