"""``item_results.meta`` (migration 0010): a live row keeps how it came to be stored (its
sampling decision, rate and fate); every other writer stores ``NULL``. On SQLite and
PostgreSQL (``ASSAY_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from assay.store import Store, open_store
from assay.store.engine import _alembic_config, create_store_engine, resolve_url
from assay.types import RunInfo, TargetSpec
from tests.store.factories import item_result, ready_score

SAMPLED = {
    "decision": "sampled",
    "rate": 0.25,
    "deterministic": True,
    "fate": "scored",
    "reason": None,
}


def _run(store: Store, run_id: str, source: str | None = "live") -> str:
    store.runs.create(
        RunInfo(
            id=run_id,
            name=run_id,
            data_source=source,
            target=TargetSpec(kind="callable", label="f"),
        )
    )
    return run_id


def _stored_meta(store: Store, run_id: str) -> dict[str, object]:
    """The raw column, as the database holds it (not through the codec)."""
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT item_id, meta FROM item_results WHERE run_id = "
            + ("?" if store.dialect == "sqlite" else "%s"),
            (run_id,),
        ).all()
    return {item_id: meta for item_id, meta in rows}


def test_a_live_row_reads_back_its_decision_rate_and_fate(store: Store) -> None:
    run_id = _run(store, "live-1")
    dropped = {**SAMPLED, "fate": "dropped", "reason": "budget"}
    rows = [
        item_result("o1", 0, scores={"s": ready_score("s", 1.0)}).model_copy(
            update={"meta": SAMPLED}
        ),
        item_result("o2", 1).model_copy(update={"meta": dropped}),
    ]
    store.live.write(run_id, rows, fates=[("scored", None), ("dropped", "budget")])
    by_id = {r.item_id: r.meta for r in store.runs.results(run_id)}
    assert by_id == {"o1": SAMPLED, "o2": dropped}
    # the item page's query and the trusted (export) stream read it too
    assert [r.meta for r in store.run_queries.item(run_id, "o2")] == [dropped]
    assert [r.meta for r in store.runs.results(run_id, trusted=True)] == [SAMPLED, dropped]
    raw = _stored_meta(store, run_id)
    if store.dialect == "sqlite":  # JSON text on SQLite; json parsed by the driver on PostgreSQL
        assert isinstance(raw["o1"], str)
    else:
        assert raw["o1"] == SAMPLED


def test_a_retry_keeps_the_first_rows_record(store: Store) -> None:
    run_id = _run(store, "live-2")
    first = item_result("o1", 0).model_copy(update={"meta": SAMPLED})
    store.live.write(run_id, [first])
    retry = first.model_copy(update={"meta": {**SAMPLED, "rate": 1.0}})
    assert store.live.write(run_id, [retry]) == {"duplicate": 1}
    assert [r.meta for r in store.runs.results(run_id)] == [SAMPLED]


def test_a_batch_runs_rows_store_null(store: Store) -> None:
    run_id = _run(store, "batch", source=None)
    store.runs.write_results(run_id, [item_result("i0", 0), item_result("i1", 1)])
    assert [r.meta for r in store.runs.results(run_id)] == [None, None]
    assert _stored_meta(store, run_id) == {"i0": None, "i1": None}  # SQL NULL, not 'null'


def _meta_migration() -> tuple[str, str]:
    """(revision, down revision) of the migration file ``*_result_meta.py``, found by name,
    so renumbering it at a merge does not touch this test."""
    scripts = ScriptDirectory.from_config(_alembic_config())
    (script,) = [s for s in scripts.walk_revisions() if s.path.endswith("_result_meta.py")]
    down = script.down_revision
    assert isinstance(down, str)
    return script.revision, down


def _columns(store_url: str) -> set[str]:
    engine = create_store_engine(resolve_url(store_url))
    try:
        return {c["name"] for c in sa.inspect(engine).get_columns("item_results")}
    finally:
        engine.dispose()


def test_the_migration_adds_the_column_in_place_and_its_downgrade_drops_it(
    store_url: str,
) -> None:
    _, before = _meta_migration()
    engine = create_store_engine(resolve_url(store_url))
    try:
        with engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), before)
    finally:
        engine.dispose()
    assert "meta" not in _columns(store_url)
    with open_store(store_url) as store:  # opening migrates to head: the column is added
        assert "meta" in _columns(store_url)
        run_id = _run(store, "live-3")
        store.live.write(run_id, [item_result("o1", 0).model_copy(update={"meta": SAMPLED})])
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), before)
        assert "meta" not in _columns(store_url)
        with store.engine.connect() as conn:  # the row itself survives the downgrade
            kept = conn.exec_driver_sql("SELECT item_id FROM item_results").scalars().all()
        assert kept == ["o1"]
    with open_store(store_url) as again:  # and upgrading again gives back an empty column
        assert [r.meta for r in again.runs.results("live-3")] == [None]
