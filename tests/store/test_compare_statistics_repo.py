"""``store.compare_statistics`` (migration 0013): compare statistics kept as JSON text by
(baseline, run, threshold), read only under the fingerprint they were computed from,
replaced by a later write, deleted with either run. On SQLite and PostgreSQL
(``ASSAY_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from assay.store import Store, open_store
from assay.store.engine import _alembic_config, create_store_engine, resolve_url
from assay.types import RunInfo, TargetSpec

BIG = '{"items": [' + ",".join(f'"item-{i:06d}"' for i in range(50_000)) + "]}"
"""Megabytes of text, as the full statistics of a 100,000-item compare are."""


def _runs(store: Store, *ids: str) -> None:
    for run_id in ids:
        store.runs.create(RunInfo(id=run_id, target=TargetSpec(kind="callable", label="f")))


def test_statistics_read_back_by_part_only_under_their_fingerprint(store: Store) -> None:
    _runs(store, "a", "b")
    repo = store.compare_statistics
    assert repo.get("a", "b", 0.0, "f1") is None
    repo.put("a", "b", 0.0, "f1", summary='{"s": "é\\u0000"}', full=BIG)
    assert repo.get("a", "b", 0.0, "f1", part="summary") == '{"s": "é\\u0000"}'
    assert repo.get("a", "b", 0.0, "f1") == BIG  # megabytes come back whole
    assert repo.get("a", "b", 0.0, "f2") is None  # stale: computed from something else
    assert repo.get("a", "b", 0.1, "f1") is None  # another threshold is another key
    assert repo.get("b", "a", 0.0, "f1") is None  # the pair has a direction


def test_a_later_write_replaces_the_row_of_its_key(store: Store) -> None:
    _runs(store, "a", "b", "c")
    repo = store.compare_statistics
    repo.put("a", "b", 0.0, "f1", summary="1", full="1")
    repo.put("a", "c", 0.0, "f1", summary="other", full="other")
    repo.put("a", "b", 0.0, "f2", summary="2", full="22")
    assert repo.get("a", "b", 0.0, "f1") is None
    assert repo.get("a", "b", 0.0, "f2") == "22"
    assert repo.get("a", "c", 0.0, "f1") == "other"
    assert repo.count() == 2


def test_deleting_either_run_deletes_its_statistics(store: Store) -> None:
    _runs(store, "a", "b", "c")
    repo = store.compare_statistics
    repo.put("a", "b", 0.0, "f", summary="ab", full="ab")
    repo.put("c", "a", 0.0, "f", summary="ca", full="ca")
    repo.put("b", "c", 0.0, "f", summary="bc", full="bc")
    store.runs.delete("a")
    assert repo.count() == 1
    assert repo.get("b", "c", 0.0, "f") == "bc"


def test_statistics_of_a_run_deleted_meanwhile_are_not_kept(store: Store) -> None:
    _runs(store, "a")
    store.compare_statistics.put("a", "gone", 0.0, "f", summary="x", full="x")
    assert store.compare_statistics.count() == 0


def _migration() -> tuple[str, str]:
    """(revision, down revision) of ``*_compare_statistics.py``, found by name, so a
    renumbering at a merge does not touch this test."""
    scripts = ScriptDirectory.from_config(_alembic_config())
    (script,) = [s for s in scripts.walk_revisions() if s.path.endswith("_compare_statistics.py")]
    down = script.down_revision
    assert isinstance(down, str)
    return script.revision, down


def _tables(store_url: str) -> set[str]:
    engine = create_store_engine(resolve_url(store_url))
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_the_migration_creates_the_table_and_its_downgrade_drops_it(store_url: str) -> None:
    revision, before = _migration()
    engine = create_store_engine(resolve_url(store_url))
    try:
        with engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), before)
    finally:
        engine.dispose()
    assert "compare_statistics" not in _tables(store_url)
    with open_store(store_url) as store:  # opening migrates to head
        assert "compare_statistics" in _tables(store_url)
        _runs(store, "a", "b")
        store.compare_statistics.put("a", "b", 0.0, "f", summary="s", full="f")
        assert store.compare_statistics.get("a", "b", 0.0, "f") == "f"
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), before)
        assert "compare_statistics" not in _tables(store_url)
        assert {r.info.id for r in store.runs.list()} == {"a", "b"}  # the runs stay
        with store.engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), revision)
    assert "compare_statistics" in _tables(store_url)
