"""PostgreSQL's searchable text copy carries each result's item id.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27

A score range combined with a text search (``ResultFilter``: ``min_score``/``max_score``
and ``q``) is, for a run with one result per item, "the items whose stored mean is in the
range" (``item_scores``, keyed by item id) and "the results whose lower-cased text holds
the needle" (``item_results_text``, keyed by result id, migration 0010). Counting both
meant mapping the range's item ids to result ids through ``item_results`` first: a second
hash join over every result of the run, about 100 ms of the 200-270 ms such a count took
at 100,000 results (load 3-4). With the item id in the copy, the count is the copy's scan
hash-joined to the range of the means, nothing else.

``item_results_text.item_id`` is added in place (nullable, filled from ``item_results``)
and the statement-level insert trigger's function is replaced by one that names its
columns (0010's inserted by position, which an added column would misalign). An item id
never changes once stored, so the row-level update trigger stays as it is. SQLite has no
copy (its search is a scan) and gets nothing.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("input", "output", "expected_output")


def _values(row: str) -> str:
    return ", ".join(f"lower(CAST({row}.{c} AS TEXT))" for c in _COLUMNS)


_UPGRADE = (
    "ALTER TABLE item_results_text ADD COLUMN item_id VARCHAR(255)",
    """
    UPDATE item_results_text AS copy SET item_id = result.item_id
    FROM item_results AS result WHERE result.id = copy.id
    """,
    f"""
    CREATE OR REPLACE FUNCTION item_results_text_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO item_results_text (id, run_id, item_id, input, output, expected_output)
        SELECT id, run_id, item_id, {_values("added")} FROM added;
        RETURN NULL;
    END $$
    """,
)

_DOWNGRADE = (
    f"""
    CREATE OR REPLACE FUNCTION item_results_text_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO item_results_text
        SELECT id, run_id, {_values("added")} FROM added;
        RETURN NULL;
    END $$
    """,
    "ALTER TABLE item_results_text DROP COLUMN item_id",
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _DOWNGRADE:
            op.execute(statement)
