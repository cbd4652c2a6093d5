"""Per-result metadata: how a live row came to be stored (sampling decision and rate, fate).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

* ``item_results.meta``: a nullable JSON object. The live monitor writes
  ``{"decision": "sampled", "rate": r, "deterministic": b, "fate": f, "reason": why}`` on
  every row it stores (issue 23: each observation records its fate with the sampling
  decision and rate; the run's metadata keeps only counters and the latest rate), and
  ``assay ingest`` writes ``{"decision": "ingested", "fate": f, "reason": why}``. Every
  other writer leaves it ``NULL``, so existing rows need no backfill.

An ``ALTER TABLE ... ADD COLUMN`` (and ``DROP COLUMN`` on the way down), never a batch copy
of ``item_results``: on SQLite a copy of a table other tables reference cascades deletes,
and a copy of a 100,000-row table is minutes of lock. Frozen like 0001: no import of
``assay.store.tables``; nothing here depends on another revision but ``down_revision``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.add_column("item_results", sa.Column("meta", _JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("item_results", "meta")
