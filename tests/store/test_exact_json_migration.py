"""Migration 0014: a store written at 0013 (SQLite ``JSON`` columns of NUMERIC affinity,
PostgreSQL ``jsonb``) keeps every row, index, constraint and foreign key; every JSON cell
reads back as it did before; values written afterwards round-trip exactly."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from assay.store import Store, open_store
from assay.store.engine import _alembic_config, create_store_engine, head_revision, resolve_url
from assay.store.tables import SQLITE_JSON_TYPE, metadata
from assay.types import Item
from tests.store.test_json_exact import ALL, mismatches, result, run_info, same

exact_json = importlib.import_module("assay.store.migrations.versions.0014_exact_json")

OLD_VALUES: list[Any] = [
    1.0,
    2.5,
    0.1234567890123456,
    1e-07,
    2**64,
    12,
    "1.0",
    {"b": 1, "a": [1.0]},
]
"""What a 0013 store holds: bare numbers (converted by SQLite's NUMERIC affinity), texts
that look like numbers, nested values."""


def at_0013(store_url: str) -> sa.Engine:
    engine = create_store_engine(resolve_url(store_url))
    with engine.connect() as conn, conn.begin():
        command.upgrade(_alembic_config(conn), "0013")
    return engine


def fill(store: Store) -> None:
    """Rows in every table with JSON a result can reach, written by today's code on the old
    schema (as a 0013 store holds them)."""
    store.datasets.create("old", metadata={"k": 1.0})
    store.datasets.add_items(
        "old",
        [
            Item(id=f"i{n}", input=v, output=v, expected_output=v, context=v, metadata={"v": v})
            for n, v in enumerate(OLD_VALUES)
        ],
    )
    store.runs.create(run_info("old-run"))
    store.runs.write_results("old-run", [result(n, v) for n, v in enumerate(OLD_VALUES)])


def snapshot(store: Store) -> dict[str, Any]:
    """What the store reads back, through the same code that will read it later."""
    return {
        "items": [item.model_dump() for item in store.datasets.items("old")],
        "dataset": store.datasets.get("old").metadata,
        "results": [r.model_dump() for r in store.runs.results("old-run")],
        "run": store.runs.get("old-run").info.model_dump(),
    }


def counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            table.name: int(
                conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            )
            for table in metadata.sorted_tables
        }


def raw_rows(engine: sa.Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table as the database holds it, in primary-key order: JSON
    cells as their stored text (SQLite: as stored, a number where the old affinity made
    one; PostgreSQL: the column cast to text)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            cells = [
                sa.cast(sa.type_coerce(c, sa.Text), sa.Text)
                if isinstance(c.type, sa.JSON) and engine.dialect.name == "postgresql"
                else sa.type_coerce(c, sa.Text)
                if isinstance(c.type, sa.JSON)
                else c
                for c in table.columns
            ]
            order = list(table.primary_key.columns) or list(table.columns)
            found[table.name] = [tuple(r) for r in conn.execute(sa.select(*cells).order_by(*order))]
    return found


def same_cells(before: dict[str, list[tuple[Any, ...]]], after: dict[str, Any]) -> list[str]:
    """Where ``after`` differs from ``before`` other than a number cell (SQLite's old
    affinity) now held as its JSON text of the same value and type."""
    differences = []
    for table, rows in before.items():
        assert len(rows) == len(after[table]), table
        for old_row, new_row in zip(rows, after[table], strict=True):
            for old, new in zip(old_row, new_row, strict=True):
                if isinstance(old, int | float) and isinstance(new, str):
                    if not same(old, json.loads(new)):
                        differences.append(f"{table}: {old!r} became {new!r}")
                elif type(old) is not type(new) or old != new:
                    differences.append(f"{table}: {old!r} became {new!r}")
    return differences


def schema_objects(engine: sa.Engine) -> list[tuple[Any, ...]]:
    """Every table, index, constraint and trigger as the database describes it, with the
    JSON columns' type names as before the migration (the one change it makes)."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            rows = conn.exec_driver_sql(
                "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name"
            ).all()
            return [(*row[:3], (row[3] or "").replace(SQLITE_JSON_TYPE, "JSON")) for row in rows]
        here = "relnamespace = CAST(current_schema() AS regnamespace)"
        return [
            *conn.exec_driver_sql(
                "SELECT indexname, indexdef FROM pg_indexes"
                " WHERE schemaname = current_schema() ORDER BY indexname"
            ).all(),
            *conn.exec_driver_sql(
                "SELECT c.relname, conname, pg_get_constraintdef(k.oid) FROM pg_constraint k"
                f" JOIN pg_class c ON c.oid = k.conrelid WHERE c.{here} ORDER BY 1, 2"
            ).all(),
            *conn.exec_driver_sql(
                "SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
                f" JOIN pg_class c ON c.oid = t.tgrelid WHERE c.{here} AND NOT tgisinternal"
                " ORDER BY 1"
            ).all(),
        ]


@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
def test_upgrade_keeps_rows_indexes_constraints_and_values(store_url: str) -> None:
    engine = at_0013(store_url)
    old = Store(engine)
    fill(old)
    before, before_counts, before_schema = snapshot(old), counts(engine), schema_objects(engine)
    before_rows = raw_rows(engine)
    assert before_counts["scores"] == len(OLD_VALUES) and before_counts["judge_calls"] > 0
    if old.dialect == "sqlite":  # the bug this migration is for, as the old schema had it
        with engine.connect() as conn:
            kinds = conn.exec_driver_sql("SELECT typeof(input) FROM dataset_items").scalars()
            assert {"integer", "real"} <= set(kinds)
    engine.dispose()

    with open_store(store_url) as store:
        after = snapshot(store)
        assert mismatches([(before, after)]) == []
        assert counts(store.engine) == before_counts
        assert same_cells(before_rows, raw_rows(store.engine)) == []
        assert schema_objects(store.engine) == before_schema
        if store.dialect == "sqlite":
            with store.engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalars().all() == ["ok"]
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
                for table, columns in exact_json.JSON_COLUMNS.items():
                    info = conn.exec_driver_sql(f'PRAGMA table_info("{table}")').all()
                    declared = {row[1]: row[2] for row in info}
                    assert {declared[c] for c in columns} == {SQLITE_JSON_TYPE}, table
                    for column in columns:
                        kinds = conn.exec_driver_sql(
                            f'SELECT DISTINCT typeof("{column}") FROM "{table}"'
                        ).scalars()
                        assert set(kinds) <= {"text", "null"}, (table, column)
                # a REAL keeps every digit (SQLite's own text conversion keeps 15)
                texts = conn.exec_driver_sql("SELECT input FROM dataset_items").scalars().all()
                assert "0.1234567890123456" in texts and "2.5" in texts
        else:
            with store.engine.connect() as conn:
                kinds = conn.exec_driver_sql(
                    "SELECT DISTINCT data_type FROM information_schema.columns"
                    " WHERE table_schema = current_schema() AND data_type LIKE 'json%%'"
                ).scalars()
                assert set(kinds) == {"json"}

        # written after the upgrade: exact, including the text-search copy's trigger path
        store.datasets.create("new")
        store.datasets.add_items("new", [Item(id=f"n{n}", input=v) for n, v in enumerate(ALL)])
        back = {item.id: item.input for item in store.datasets.items("new")}
        assert mismatches([(v, back[f"n{n}"]) for n, v in enumerate(ALL)]) == []
        store.runs.create(run_info("new-run"))
        store.runs.write_results("new-run", [result(0, 1.0), result(1, 2**64)])
        outputs = [r.output for r in store.runs.results("new-run")]
        assert mismatches([(1.0, outputs[0]), (2**64, outputs[1])]) == []
        if store.dialect == "postgresql":  # 0010's update trigger still keeps the copy
            with store.engine.begin() as conn:
                conn.exec_driver_sql(
                    "UPDATE item_results SET output = input WHERE run_id = 'new-run'"
                )
                copied = conn.exec_driver_sql(
                    "SELECT count(*) FROM item_results_text"
                    " WHERE run_id = 'new-run' AND output = input"
                ).scalar_one()
            assert copied == 2


def test_a_connection_opened_before_the_upgrade_writes_with_the_new_schema(tmp_path: Any) -> None:
    """Another process's connection that read the old schema sees the change (the schema
    version is incremented), so its next write keeps the text too."""
    url = f"sqlite:///{tmp_path / 'early.db'}"
    early = at_0013(url)
    with early.connect() as conn:  # schema read and cached at 0013
        conn.exec_driver_sql("SELECT count(*) FROM datasets").scalar_one()
        conn.rollback()  # the connection stays open, its read snapshot ends
        with open_store(url) as store:
            store.datasets.create("d")
        conn.exec_driver_sql(
            "INSERT INTO datasets (id, name, metadata, version, item_count, created_at,"
            " updated_at) VALUES ('x', 'x', '1.0', 0, 0, 0, 0)"
        )
        conn.commit()
        kind = conn.exec_driver_sql("SELECT typeof(metadata) FROM datasets WHERE id = 'x'")
        assert kind.scalar_one() == "text"
    early.dispose()


def test_downgrade_restores_the_old_declarations_and_upgrade_again_is_clean(
    store_url: str,
) -> None:
    with open_store(store_url) as store:
        store.datasets.create("d", metadata={"v": 1.0})
        store.datasets.add_items("d", [Item(id="a", input=1e22)])
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), "0013")
        with store.engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), "head")
        (item,) = store.datasets.items("d")
        if store.dialect == "sqlite":  # the text was kept as text in the meantime
            assert same(item.input, 1e22)
        assert store.datasets.get("d").metadata == {"v": 1.0}
    assert head_revision() == "0014"


@pytest.mark.parametrize(
    ("sql", "column", "expected"),
    [
        (
            "CREATE TABLE t (\n\tinput JSON, \n\tx INT)",
            "input",
            "CREATE TABLE t (\n\tinput JSON_TEXT, \n\tx INT)",
        ),
        (
            'CREATE TABLE t (\n\t"values" JSON, \n\tid INT)',
            "values",
            'CREATE TABLE t (\n\t"values" JSON_TEXT, \n\tid INT)',
        ),
        (
            "CREATE TABLE t (id INT, raw_output TEXT, output JSON)",
            "output",
            "CREATE TABLE t (id INT, raw_output TEXT, output JSON_TEXT)",
        ),
        # added by ALTER TABLE ADD COLUMN (0011): appended before the closing parenthesis
        (
            "CREATE TABLE t (id INT, CONSTRAINT pk PRIMARY KEY (id), meta JSON)",
            "meta",
            "CREATE TABLE t (id INT, CONSTRAINT pk PRIMARY KEY (id), meta JSON_TEXT)",
        ),
    ],
)
def test_a_declaration_is_changed_exactly_where_it_is(sql: str, column: str, expected: str) -> None:
    assert exact_json.declared_as(sql, column, "JSON", "JSON_TEXT") == expected


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t (id INT, input TEXT)",  # not JSON: a schema the migration does not know
        "CREATE TABLE t (id INT, input JSON_TEXT)",  # already changed
        "CREATE TABLE t (id INT, expected_input JSON)",  # another column's name contains it
    ],
)
def test_an_unknown_declaration_stops_the_migration(sql: str) -> None:
    with pytest.raises(ValueError, match="'input' is not declared JSON once"):
        exact_json.declared_as(sql, "input", "JSON", "JSON_TEXT")


def test_the_migration_names_every_json_column_of_the_tables() -> None:
    described = {
        table.name: tuple(c.name for c in table.columns if isinstance(c.type, sa.JSON))
        for table in metadata.sorted_tables
    }
    assert {t: c for t, c in described.items() if c} == exact_json.JSON_COLUMNS
