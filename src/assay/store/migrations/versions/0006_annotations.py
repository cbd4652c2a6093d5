"""Human annotations of run results: a person's label, score and comment on an item.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

* ``annotations``: append-only (history kept, nothing overwritten); ``id`` grows with every
  insert so "the latest annotation" is the largest id, not a clock comparison. ``repeat``
  and ``scorer_id`` are optional: an annotation may be about the whole item, one repeat, or
  one scorer's score. Deleting a run deletes its annotations.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "annotations",
        sa.Column("id", ROW_ID, autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=True),
        sa.Column("scorer_id", sa.String(255), nullable=True),
        sa.Column("author", sa.String(255), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_annotations_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_annotations"),
    )
    op.create_index("ix_annotations_item", "annotations", ["run_id", "item_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_annotations_item", "annotations")
    op.drop_table("annotations")
