"""Scores carry named values and a corpus payload; ``scorer_run_id`` is renamed ``call_id``.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28

* ``scores.values`` (JSON object of named extra numbers: rouge1/rouge2/..., ``NULL`` when
  none) and ``scores.corpus`` (JSON per-item payload of corpus-level aggregations).
* ``scores.scorer_run_id`` becomes ``scores.call_id`` (the Python field's name).

In place on both backends, with no table copy: ``ADD COLUMN`` and ``RENAME COLUMN`` are
native in PostgreSQL and in SQLite (3.25+). A batch-mode copy on SQLite would drop and
re-create ``scores``, and dropping it with foreign keys on would cascade-delete the judge
calls that reference it. Existing rows keep everything; their ``values``/``corpus`` are
``NULL`` (no values). Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.alter_column("scores", "scorer_run_id", new_column_name="call_id")
    op.add_column("scores", sa.Column("values", JSON, nullable=True))
    op.add_column("scores", sa.Column("corpus", JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("scores", "corpus")  # SQLite 3.35+ drops columns natively
    op.drop_column("scores", "values")
    op.alter_column("scores", "call_id", new_column_name="scorer_run_id")
