"""An index on a run's latencies, so its summary finds their percentiles without sorting.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26

* ``ix_item_results_latency`` on ``item_results (run_id, latency_ms)``: a stored run's
  summary reads its p50/p95 latency as order statistics (``ORDER BY latency_ms LIMIT 1
  OFFSET k``, ``assay.store.summary_source``). Without the index the database sorts every
  latency of the run for each of them, holding them all in its sorter (SQLite: about 1.5
  MiB more at 100,000 items); with it the query walks the index.

Frozen like 0001: no import of ``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_item_results_latency", "item_results", ["run_id", "latency_ms"])


def downgrade() -> None:
    op.drop_index("ix_item_results_latency", table_name="item_results")
