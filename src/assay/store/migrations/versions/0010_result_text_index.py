"""Searchable text of each result on PostgreSQL: a lower-cased copy, kept by a trigger.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

Text search on a run page (``ResultFilter.q``: a case-insensitive substring of the input,
output or expected output as JSON text) counted its matches by casting and lower-casing
every JSONB value of the run per request. ``item_results_text`` is a plain table of the
same three lower-cased texts per result (cascading with it), filled by a statement-level
trigger from the inserted rows' transition table (one ``INSERT ... SELECT`` per batch, not
a call per row); a search's count is the same ``LIKE`` over stored text (129 ms against
378 ms for the scan at 100,000 results, load 7). No trigram index: a common word matches
half a run, which an index cannot count faster, and ``pg_trgm`` may be missing on a server.

SQLite gets nothing: a trigram FTS5 index kept by triggers was tried and made every stored
result 2.4x slower to write, for every run, to speed up a search that only 100,000-item
runs need; SQLite's scan answers one in about 113 ms there.

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
    """PostgreSQL only: SQLite searches by scan (an FTS5 index kept by triggers made every
    stored result 2.4x slower to write; see ``assay.store.run_queries._text_condition``)."""
    if op.get_bind().dialect.name == "postgresql":
        for statement in _POSTGRES_UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER item_results_text_change ON item_results")
        op.execute("DROP TRIGGER item_results_text_add ON item_results")
        op.execute("DROP FUNCTION item_results_text_change()")
        op.execute("DROP FUNCTION item_results_text_add()")
        op.execute("DROP TABLE item_results_text")
