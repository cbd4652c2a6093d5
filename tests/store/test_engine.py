"""Opening the store: URL resolution, SQLite settings, migrations, concurrent first opens."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from assay.store import Store, open_store, resolve_url
from assay.store.engine import current_revision, head_revision
from assay.store.tables import compare_type, is_described, metadata

EXPECTED_TABLES = {
    "alembic_version",
    "datasets",
    "dataset_versions",
    "dataset_items",
    "runs",
    "run_items",
    "item_results",
    "scores",
    "judge_calls",
    "model_cache",
}


def test_default_url_is_a_sqlite_file_under_the_current_directory(tmp_path: Path) -> None:
    url = resolve_url()
    assert url.get_backend_name() == "sqlite"
    assert Path(url.database or "") == tmp_path / ".assay" / "assay.db"
    assert (tmp_path / ".assay").is_dir()


def test_url_from_the_environment_and_postgres_driver(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", f"sqlite:///{tmp_path / 'env' / 'x.db'}")
    assert Path(resolve_url().database or "") == tmp_path / "env" / "x.db"
    assert resolve_url("postgresql://u:p@h/db").drivername == "postgresql+psycopg"
    assert resolve_url("postgres://u:p@h/db").drivername == "postgresql+psycopg"
    assert resolve_url("postgresql+psycopg://u:p@h/db").drivername == "postgresql+psycopg"
    assert resolve_url("plain.db").database == "plain.db"
    with pytest.raises(ValueError, match="unsupported database"):
        resolve_url("mysql://u:p@h/db")


def test_migrations_applied_on_open_and_idempotent_on_reopen(store_url: str) -> None:
    with open_store(store_url) as first:
        tables = set(sa.inspect(first.engine).get_table_names())
        assert tables >= EXPECTED_TABLES
        assert current_revision(first.engine) == head_revision()
        first.datasets.create("kept")
    with open_store(store_url) as second:  # re-open: no error, no data lost
        assert current_revision(second.engine) == head_revision()
        assert [d.name for d in second.datasets.list()] == ["kept"]
        with second.engine.connect() as conn:
            versions = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
        assert versions == [(head_revision(),)]


@pytest.mark.filterwarnings(
    # SQLite's text-search index is on an expression (0010), left out of the comparison
    "ignore:Skipped unsupported reflection of expression-based index item_results_text_run"
)
def test_tables_module_matches_the_migrations(store: Store) -> None:
    """The query-side metadata and the migrated schema describe the same database."""
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": compare_type, "include_name": is_described}
        )
        differences = compare_metadata(context, metadata)
    assert differences == []


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'p.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert store.dialect == "sqlite"


def test_postgresql_sessions_run_without_jit(postgres_schema_url: str) -> None:
    """JIT compiling cost more than the store's index walks it would speed up (issue 25):
    off on every connection, and still off on a connection the pool handed back after a
    rolled-back transaction (the pool's reset must not undo it)."""
    with open_store(postgres_schema_url) as store:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW jit").scalar() == "off"
            conn.exec_driver_sql("SELECT 1")
            conn.rollback()
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW jit").scalar() == "off"
        store.engine.dispose()  # a new connection
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW jit").scalar() == "off"


def test_store_url_hides_the_password() -> None:
    store = Store(sa.create_engine("postgresql+psycopg://u:secret@localhost/db"))
    assert "secret" not in store.url and "***" in store.url
    assert store.dialect == "postgresql"


OPENER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from assay.store import open_store
    url, name, go = sys.argv[1:4]
    while not Path(go).exists():  # imports done: wait so that every process opens at once
        time.sleep(0.002)
    with open_store(url) as store:
        store.datasets.create(name)
    """
)


def test_concurrent_first_opens_do_not_break(store_url: str, tmp_path: Path) -> None:
    """Several processes opening the same fresh database at once all succeed."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, store_url, f"ds{i}", str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(5)
    ]
    time.sleep(1.5)
    go.touch()
    outcomes = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    assert [code for code, _ in outcomes] == [0] * 5, [err for _, err in outcomes]
    with open_store(store_url) as store:
        assert sorted(d.name for d in store.datasets.list()) == [f"ds{i}" for i in range(5)]
        assert current_revision(store.engine) == head_revision()
