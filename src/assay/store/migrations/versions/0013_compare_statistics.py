"""Stored compare statistics: a run's paired statistics against a baseline, kept.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

* ``compare_statistics``: one row per (baseline run, run, threshold) with the fingerprint
  of what they were computed from, the statistics as JSON text without their per-item
  lists (``summary``) and with them (``full``), and when they were computed. Both runs
  reference ``runs`` with ``ON DELETE CASCADE``. Issue 25: the bootstrap over two
  100,000-item runs was computed again after every server restart and in every worker.

A new table only: nothing existing is copied or rewritten. Frozen like 0001: no import of
``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "compare_statistics",
        sa.Column("baseline_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("threshold", sa.Double(), nullable=False),
        sa.Column("fingerprint", sa.String(255), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("full", sa.Text(), nullable=False),
        sa.Column("computed_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["baseline_id"],
            ["runs.id"],
            name="fk_compare_statistics_baseline_id_runs",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_compare_statistics_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("baseline_id", "run_id", "threshold", name="pk_compare_statistics"),
    )


def downgrade() -> None:
    op.drop_table("compare_statistics")
