"""A trigram index over each result's input, output and expected output (SQLite).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

Text search on a run page (``ResultFilter.q``: a case-insensitive substring of the input,
output or expected output as JSON text) scanned every result of the run: 0.4–0.6 s at
100,000 items, most of it the count for "page X of Y". On SQLite this adds
``item_results_text``, a contentless FTS5 table with the ``trigram`` tokenizer
(case-sensitive) over ``lower(CAST(column AS TEXT))`` of the three columns, keyed by the
result's rowid. SQLite's ``lower()`` folds ASCII only, as the search's ``LIKE`` does, so a
phrase match of the lower-cased needle (three characters or more) finds exactly the rows
the scan finds (``run_queries._text_condition``).

Triggers keep it with the results, inside the transaction that writes or deletes them
(cascaded deletes of a run fire them too), whatever code path writes. A search matches
only the rowids between the run's first and last (``item_results_text_run``, an index on
the run id alone: both ends are one probe each), so other runs' matches are skipped.
Contentless: the index holds no second copy of the text; a delete hands the old values
back to FTS5.
SQLite's ``VACUUM`` may renumber the rowids of a table without an INTEGER PRIMARY KEY
(``item_results``), which would leave the index pointing at other rows; assay never runs
it, and a contentless index cannot be rebuilt in place: after a manual ``VACUUM``, run
this migration's downgrade and upgrade (``alembic downgrade 0009 && upgrade head``).

PostgreSQL: nothing (its scan is in the same range and ``pg_trgm`` is an extension a
server may not have).

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("input", "output", "expected_output")


def _values(row: str) -> str:
    return ", ".join(f"lower(CAST({row}.{c} AS TEXT))" for c in _COLUMNS)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    names = ", ".join(_COLUMNS)
    op.execute(
        f"CREATE VIRTUAL TABLE item_results_text USING fts5({names}, content='', "
        "tokenize='trigram case_sensitive 1')"
    )
    # a run's first and last rowid in two index probes: the bounds that keep a search
    # to the run's stretch of the index (a common word in other runs costs nothing)
    op.execute("CREATE INDEX item_results_text_run ON item_results (run_id)")
    op.execute(
        f"INSERT INTO item_results_text (rowid, {names}) "
        f"SELECT rowid, {_values('item_results')} FROM item_results"
    )
    op.execute(
        "CREATE TRIGGER item_results_text_insert AFTER INSERT ON item_results BEGIN "
        f"INSERT INTO item_results_text (rowid, {names}) VALUES (new.rowid, {_values('new')}); "
        "END"
    )
    delete_old = (
        f"INSERT INTO item_results_text (item_results_text, rowid, {names}) "
        f"VALUES ('delete', old.rowid, {_values('old')});"
    )
    op.execute(
        f"CREATE TRIGGER item_results_text_delete AFTER DELETE ON item_results BEGIN "
        f"{delete_old} END"
    )
    op.execute(
        f"CREATE TRIGGER item_results_text_update AFTER UPDATE OF {names} ON item_results "
        f"BEGIN {delete_old} "
        f"INSERT INTO item_results_text (rowid, {names}) VALUES (new.rowid, {_values('new')}); "
        "END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER item_results_text_update")
    op.execute("DROP TRIGGER item_results_text_delete")
    op.execute("DROP TRIGGER item_results_text_insert")
    op.execute("DROP TABLE item_results_text")
    op.execute("DROP INDEX item_results_text_run")
