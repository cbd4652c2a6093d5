"""Work units of scaled-out runs, and the backend a run executed on.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27

* ``work_units``: one row per (run, position, repeat) still to score by a ``backend="ray"``
  run, with its item and a lease (owner, expiry, attempts). Unique on the key; a row is
  deleted when its result is stored. Deleting a run deletes its units.
* ``runs.backend`` (``local``/``ray``, ``NULL``: local) and ``runs.workers`` (how many
  workers scored it), shown with the run.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.add_column("runs", sa.Column("backend", sa.String(16), nullable=True))
    op.add_column("runs", sa.Column("workers", sa.Integer(), nullable=True))
    op.create_table(
        "work_units",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        sa.Column("input", _JSON, nullable=True),
        sa.Column("output", _JSON, nullable=True),
        sa.Column("expected_output", _JSON, nullable=True),
        sa.Column("context", _JSON, nullable=True),
        sa.Column("metadata", _JSON, nullable=True),
        sa.Column("lease_owner", sa.String(255), nullable=True),
        sa.Column("lease_expires_at", sa.Double(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_work_units_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_work_units"),
        sa.UniqueConstraint("run_id", "position", "repeat", name="uq_work_units_key"),
    )


def downgrade() -> None:
    op.drop_table("work_units")
    # plain DROP COLUMN (SQLite >= 3.35), as 0003: a batch copy of ``runs`` would drop and
    # re-create the table, and SQLite's ON DELETE CASCADE would take every result with it
    op.drop_column("runs", "workers")
    op.drop_column("runs", "backend")
