"""Searchable text of each result: a trigram index on SQLite, a lower-cased copy on PostgreSQL.

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
``run_id || ''``: both ends are one probe each), so other runs' matches are skipped.
Contentless: the index holds no second copy of the text; a delete hands the old values
back to FTS5.
SQLite's ``VACUUM`` may renumber the rowids of a table without an INTEGER PRIMARY KEY
(``item_results``), which would leave the index pointing at other rows; assay never runs
it, and a contentless index cannot be rebuilt in place: after a manual ``VACUUM``, run
this migration's downgrade and upgrade (``alembic downgrade 0009 && upgrade head``).

PostgreSQL: ``item_results_text`` is a plain table of the same three lower-cased texts
per result (cascading with it), filled by a statement-level trigger from the inserted
rows' transition table (one ``INSERT ... SELECT`` per batch, not a call per row); a
search's count is the same ``LIKE`` over stored text, with no cast and ``lower`` of every
JSONB value per request (129 ms against 378 ms for the scan at 100,000 results, load 7).
No trigram index: a common word matches half a
run, which an index cannot count faster, and ``pg_trgm`` may be missing on a server.

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


_POSTGRES_UPGRADE = (
    """
    CREATE TABLE item_results_text (
        id VARCHAR(64) NOT NULL PRIMARY KEY
            REFERENCES item_results (id) ON DELETE CASCADE,
        run_id VARCHAR(64) NOT NULL,
        input TEXT,
        output TEXT,
        expected_output TEXT
    )
    """,
    "CREATE INDEX item_results_text_run ON item_results_text (run_id)",
    f"INSERT INTO item_results_text SELECT id, run_id, {_values('item_results')} FROM item_results",
    f"""
    CREATE FUNCTION item_results_text_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO item_results_text
        SELECT id, run_id, {_values("added")} FROM added;
        RETURN NULL;
    END $$
    """,
    """
    CREATE FUNCTION item_results_text_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE item_results_text SET
            input = lower(CAST(NEW.input AS TEXT)),
            output = lower(CAST(NEW.output AS TEXT)),
            expected_output = lower(CAST(NEW.expected_output AS TEXT))
        WHERE id = NEW.id;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER item_results_text_add AFTER INSERT ON item_results
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION item_results_text_add()
    """,
    """
    CREATE TRIGGER item_results_text_change
    AFTER UPDATE OF input, output, expected_output ON item_results
    FOR EACH ROW EXECUTE FUNCTION item_results_text_change()
    """,
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _POSTGRES_UPGRADE:
            op.execute(statement)
        return
    names = ", ".join(_COLUMNS)
    op.execute(
        f"CREATE VIRTUAL TABLE item_results_text USING fts5({names}, content='', "
        "tokenize='trigram case_sensitive 1')"
    )
    # a run's first and last rowid in two index probes: the bounds that keep a search
    # to the run's stretch of the index (a common word in other runs costs nothing). On
    # an expression, so that only that query uses it: on ``run_id`` itself, SQLite
    # (without statistics) preferred it to the partial index of failed results
    op.execute("CREATE INDEX item_results_text_run ON item_results (run_id || '')")
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
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER item_results_text_change ON item_results")
        op.execute("DROP TRIGGER item_results_text_add ON item_results")
        op.execute("DROP FUNCTION item_results_text_change()")
        op.execute("DROP FUNCTION item_results_text_add()")
        op.execute("DROP TABLE item_results_text")
        return
    op.execute("DROP TRIGGER item_results_text_update")
    op.execute("DROP TRIGGER item_results_text_delete")
    op.execute("DROP TRIGGER item_results_text_insert")
    op.execute("DROP TABLE item_results_text")
    op.execute("DROP INDEX item_results_text_run")
