"""Calibration certificates: a scorer's measured agreement with human labels.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24

* ``calibration_certificates``: one row per calibration of one scorer configuration. It is
  bound to the scorer's fingerprint (type, params, judge model, prompt text; ``fingerprint``
  plus the parts it was hashed from in ``fingerprint_parts``, so a later lookup can say *what*
  changed: the prompt or the judge model) and to the labelled data (``data_key``: a dataset's
  ``name@version`` or a data file's ``sha256:`` content hash). It keeps the statistics with
  their confidence intervals, the gates and whether they passed, the number of items and the
  calibration run that produced it (``run_id``; ``SET NULL`` when the run is deleted, the
  certificate stays valid evidence).
* Lookups go by fingerprint (is this exact scorer certified?) and by scorer type and label
  (is there a certificate for an *earlier* configuration of it, i.e. a stale one?).

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "calibration_certificates",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("fingerprint", sa.String(128), nullable=False),
        sa.Column("fingerprint_parts", JSON, nullable=False),
        sa.Column("scorer_type", sa.String(255), nullable=False),
        sa.Column("scorer_label", sa.String(255), nullable=False),
        sa.Column("judge_model", sa.String(255), nullable=True),
        sa.Column("data_key", sa.Text(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("statistics", JSON, nullable=False),
        sa.Column("gates", JSON, nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name="fk_calibration_certificates_run_id_runs",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_calibration_certificates"),
    )
    op.create_index(
        "ix_calibration_certificates_fingerprint",
        "calibration_certificates",
        ["fingerprint", "created_at"],
    )
    op.create_index(
        "ix_calibration_certificates_scorer",
        "calibration_certificates",
        ["scorer_type", "scorer_label", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_calibration_certificates_scorer", "calibration_certificates")
    op.drop_index("ix_calibration_certificates_fingerprint", "calibration_certificates")
    op.drop_table("calibration_certificates")
