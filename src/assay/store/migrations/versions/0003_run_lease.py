"""Runs carry a lease: who is executing them and until when.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

* ``runs.lease_owner`` (``host:pid:token`` of the process executing the run, ``NULL`` when
  none) and ``runs.lease_expires_at`` (unix seconds). The executing process renews the lease
  while it runs; a second process that wants to resume the run must wait until the lease
  expires or its owner is gone, and a ``running`` run whose lease lapsed is shown as
  ``interrupted``. Frozen: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("lease_owner", sa.String(255), nullable=True))
    op.add_column("runs", sa.Column("lease_expires_at", sa.Double(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "lease_expires_at")
    op.drop_column("runs", "lease_owner")
