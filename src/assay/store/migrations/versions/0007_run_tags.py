"""Run tags: labels on runs (the pytest plugin's session, git commit and branch; baselines).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26

* ``run_tags``: one row per (run, tag); the tag index serves "the newest run tagged X".
  Deleting a run deletes its tags.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_tags",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("tag", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_tags_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "tag", name="pk_run_tags"),
    )
    op.create_index("ix_run_tags_tag", "run_tags", ["tag"])


def downgrade() -> None:
    op.drop_index("ix_run_tags_tag", "run_tags")
    op.drop_table("run_tags")
