"""Stored prompt optimizations: the optimization, its candidates, evaluations, reflections.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

* ``optimizations``: one row per ``assay optimize`` (its validated config, status, the GEPA
  ``run_dir`` it resumes from, progress so far: metric calls, iterations, cost, elapsed time,
  best candidate; the final result with the held-out test check).
* ``optimization_candidates``: every candidate GEPA kept (``idx`` is GEPA's program index),
  its component texts, parents, iteration and which components changed. Keyed by
  (optimization, idx) so a candidate re-proposed after a resume replaces the lost one.
* ``optimization_evaluations``: every (candidate, split, batch) evaluation, each one a normal
  stored run (``run_id``), so ``runs list``/``compare`` and reports work on them.
* ``optimization_reflections``: the reflection prompts sent and the answers received.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "optimizations",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("config", JSON, nullable=False),
        sa.Column("run_dir", sa.Text(), nullable=False),
        sa.Column("progress", JSON, nullable=False),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_optimizations"),
    )
    op.create_table(
        "optimization_candidates",
        sa.Column("optimization_id", sa.String(64), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("candidate_hash", sa.String(64), nullable=False),
        sa.Column("components", JSON, nullable=False),
        sa.Column("parents", JSON, nullable=False),
        sa.Column("changed", JSON, nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("val_score", sa.Double(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["optimization_id"],
            ["optimizations.id"],
            name="fk_optimization_candidates_optimization_id_optimizations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("optimization_id", "idx", name="pk_optimization_candidates"),
    )
    op.create_table(
        "optimization_evaluations",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("optimization_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("candidate_hash", sa.String(64), nullable=False),
        sa.Column("split", sa.String(16), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("metric_calls", sa.Integer(), nullable=False),
        sa.Column("mean_score", sa.Double(), nullable=True),
        sa.Column("cost_usd", sa.Double(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["optimization_id"],
            ["optimizations.id"],
            name="fk_optimization_evaluations_optimization_id_optimizations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name="fk_optimization_evaluations_run_id_runs",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_optimization_evaluations"),
    )
    op.create_index(
        "ix_optimization_evaluations_optimization",
        "optimization_evaluations",
        ["optimization_id", "created_at"],
    )
    op.create_table(
        "optimization_reflections",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("optimization_id", sa.String(64), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("component", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cost_usd", sa.Double(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["optimization_id"],
            ["optimizations.id"],
            name="fk_optimization_reflections_optimization_id_optimizations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_optimization_reflections"),
    )
    op.create_index(
        "ix_optimization_reflections_optimization",
        "optimization_reflections",
        ["optimization_id", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_optimization_reflections_optimization", "optimization_reflections")
    op.drop_table("optimization_reflections")
    op.drop_index("ix_optimization_evaluations_optimization", "optimization_evaluations")
    op.drop_table("optimization_evaluations")
    op.drop_table("optimization_candidates")
    op.drop_table("optimizations")
