"""JSON columns that keep the JSON text as written: TEXT affinity on SQLite, ``json`` on
PostgreSQL.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

Why: a stored value must read back as it was written (``assay.store.tables.JSONType``).

* SQLite: a column declared ``JSON`` has NUMERIC affinity, so SQLite converted a stored
  JSON text that reads as a number: ``1.0`` became the INTEGER ``1``, ``2**64`` and
  ``1e-07`` REALs (a float for an integer, digits lost above 2**53). The columns are
  declared ``JSON_TEXT`` (TEXT affinity: text is stored as written).
* PostgreSQL: ``jsonb`` keeps numbers as ``numeric``, which prints ``1e22`` as a 23-digit
  integer, ``-0.0`` as ``0.0``, and reorders object keys. The columns become ``json``
  (the text as written, checked for validity); no query uses ``jsonb`` operators or
  indexes on them.

How, and why not a copy of each table: on SQLite the declared type only decides how a
*future* write is converted, it does not change the file format of stored records, so the
type names are changed in place in ``sqlite_schema`` (SQLite's documented procedure for
schema changes that leave stored content as it is: lang_altertable.html, "Making Other
Kinds Of Table Schema Changes", with ``schema_version`` incremented so every connection
reloads the schema). A rebuild (``batch_alter_table(recreate="always")``) would copy every
row of every results table on the first open, and, inside the migration's transaction
where ``PRAGMA foreign_keys`` cannot be turned off, its ``DROP TABLE`` of the old
``item_results`` would cascade and delete every score. Every row, index, constraint and
foreign key stays as it was (tests/store/test_exact_json_migration.py).

Then one pass per table turns each cell that the old affinity had converted into a number
back into JSON text (TEXT affinity expects text; ``PRAGMA integrity_check`` reports a
number there): its exact value as Python writes it (``repr``), so a REAL keeps all its
digits (SQLite's own text conversion keeps 15).

What cannot be recovered: a value already changed by the old schema. On SQLite a text
``1.0`` stored as the INTEGER ``1`` reads back as ``1``, ``2**64`` as the float
``1.8446744073709552e+19``; on PostgreSQL the ``jsonb`` text is what is left (``1e22`` as
``10000000000000000000000``, ``-0.0`` as ``0.0``, keys in ``jsonb``'s order). Only values
written after this migration round-trip exactly.

On PostgreSQL each table is rewritten once (one ``ALTER TABLE`` for all its columns); the
trigger that keeps the text-search copy on an update of ``item_results``' texts (0010)
names those columns, so it is dropped and created again around the change.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_COLUMNS: dict[str, tuple[str, ...]] = {
    "datasets": ("metadata",),
    "dataset_items": ("input", "output", "expected_output", "context", "metadata"),
    "runs": ("target", "scorers", "metadata", "summary"),
    "run_items": ("input", "output", "expected_output", "context", "metadata"),
    "item_results": ("input", "output", "expected_output", "error", "warnings", "meta"),
    "scores": ("values", "corpus", "steps", "prompts", "error"),
    "judge_calls": ("output",),
    "calibration_certificates": ("fingerprint_parts", "statistics", "gates"),
    "optimizations": ("config", "progress", "result"),
    "optimization_candidates": ("components", "parents", "changed"),
    "work_units": ("input", "output", "expected_output", "context", "metadata"),
}
"""Every JSON column at revision 0013, by table."""

_OLD, _NEW = "JSON", "JSON_TEXT"

_TEXT_TRIGGER = "item_results_text_change"
_CREATE_TEXT_TRIGGER = f"""
    CREATE TRIGGER {_TEXT_TRIGGER}
    AFTER UPDATE OF input, output, expected_output ON item_results
    FOR EACH ROW EXECUTE FUNCTION item_results_text_change()
"""
"""Migration 0010's update trigger, as it created it."""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _sqlite_declare(bind, _OLD, _NEW)
        for table, columns in JSON_COLUMNS.items():
            _sqlite_numbers_as_text(bind, table, columns)
    else:
        _postgres_retype(bind, "json")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _sqlite_declare(bind, _NEW, _OLD)
    else:
        _postgres_retype(bind, "jsonb")


def declared_as(sql: str, column: str, old: str, new: str) -> str:
    """``sql`` (a ``CREATE TABLE``) with ``column`` declared ``new`` where it is declared
    ``old``; a ``ValueError`` unless exactly one declaration changed (a schema this
    migration does not know is left alone rather than guessed at)."""
    pattern = re.compile(rf'(?<=[\s(,])("?){re.escape(column)}\1(\s+){old}(?=[\s,)])')
    changed, count = pattern.subn(
        lambda m: f"{m.group(1)}{column}{m.group(1)}{m.group(2)}{new}", sql
    )
    if count != 1:
        raise ValueError(f"column {column!r} is not declared {old} once in: {sql}")
    return changed


def _sqlite_declare(bind: sa.Connection, old: str, new: str) -> None:
    """Every JSON column declared ``new`` instead of ``old``, in place (see the module
    docstring), in the migration's transaction."""
    version = int(bind.exec_driver_sql("PRAGMA schema_version").scalar_one())
    rows = bind.exec_driver_sql(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name IN "
        f"({', '.join('?' for _ in JSON_COLUMNS)})",
        tuple(JSON_COLUMNS),
    ).all()
    found = {str(name): str(sql) for name, sql in rows}
    missing = set(JSON_COLUMNS) - set(found)
    if missing:
        raise RuntimeError(f"tables missing at revision 0013: {sorted(missing)}")
    changed = {}
    for table, columns in JSON_COLUMNS.items():
        sql = found[table]
        for column in columns:
            sql = declared_as(sql, column, old, new)
        changed[table] = sql
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        for table, sql in changed.items():
            bind.exec_driver_sql(
                "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
                (sql, table),
            )
        bind.exec_driver_sql(f"PRAGMA schema_version = {version + 1}")
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    for table, columns in JSON_COLUMNS.items():
        declared = {
            str(row[1]): str(row[2])
            for row in bind.exec_driver_sql(f'PRAGMA table_info("{table}")').all()
        }
        wrong = [c for c in columns if declared.get(c) != new]
        if wrong:
            raise RuntimeError(f"{table}: columns {wrong} not declared {new} after the change")


def _json_number(value: object) -> object:
    """A number the old affinity stored as a number, as its JSON text (``repr``: every
    digit of a REAL); anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return "null"
    return repr(value)


def _sqlite_numbers_as_text(bind: sa.Connection, table: str, columns: tuple[str, ...]) -> None:
    """One scan of ``table``: every cell of ``columns`` held as an INTEGER or REAL written
    back as its JSON text. The matching rows are read first, then updated (changing a
    table while a read of it is stepping is undefined in SQLite)."""
    quoted = [f'"{column}"' for column in columns]
    numeric = " OR ".join(f"typeof({q}) IN ('integer', 'real')" for q in quoted)
    rows = bind.exec_driver_sql(
        f'SELECT rowid, {", ".join(quoted)} FROM "{table}" WHERE {numeric}'
    ).all()
    if not rows:
        return
    assignments = ", ".join(f"{q} = ?" for q in quoted)
    bind.exec_driver_sql(
        f'UPDATE "{table}" SET {assignments} WHERE rowid = ?',
        [(*(_json_number(v) for v in row[1:]), row[0]) for row in rows],
    )


def _postgres_retype(bind: sa.Connection, type_: str) -> None:
    """Every JSON column as ``type_``, one rewrite per table; 0010's update trigger names
    ``item_results``' texts, so it is recreated around the change."""
    trigger = bind.exec_driver_sql(
        "SELECT count(*) FROM pg_trigger"
        " WHERE tgname = %s AND tgrelid = CAST('item_results' AS regclass)",
        (_TEXT_TRIGGER,),
    ).scalar_one()
    if trigger:
        bind.exec_driver_sql(f"DROP TRIGGER {_TEXT_TRIGGER} ON item_results")
    for table, columns in JSON_COLUMNS.items():
        changes = ", ".join(
            f'ALTER COLUMN "{column}" TYPE {type_} USING "{column}"::{type_}' for column in columns
        )
        bind.exec_driver_sql(f'ALTER TABLE "{table}" {changes}')
    if trigger:
        bind.exec_driver_sql(_CREATE_TEXT_TRIGGER)
