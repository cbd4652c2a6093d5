"""Fast run pages at 100,000 items: per-item score aggregates and covering indexes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27

* ``item_scores``: per (run, scorer, item) the sum, count and mean of the item's ready
  scores, with the item's position, written with the results; two partial indexes on
  (run, scorer, mean, position) give the ascending and descending rank of a run's items
  by a scorer as an index walk. Backfilled here from the stored scores. Deleting a run
  deletes its rows.
* ``ix_item_results_items`` (run, position, item, repeat, id) and ``ix_scores_ranking``
  (result, scorer, status, score): covering indexes for the grouped ranking of filtered
  pages, which then reads neither table.
* ``ix_item_results_failed`` / ``ix_scores_failed``: partial indexes over the failed
  results and failed scores, so "errors only" reads those rows instead of every row's
  ``error``.

Only tables are created and indexes added: no batch copy of ``runs`` or ``item_results``
(on SQLite a copy of a parent table cascades deletes). Frozen like 0001: no import of
``assay.store.tables``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NOT_NULL_MEAN = sa.text("mean IS NOT NULL")


def upgrade() -> None:
    op.create_table(
        "item_scores",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("scorer_id", sa.String(255), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("score_sum", sa.Double(), nullable=False),
        sa.Column("score_count", sa.Integer(), nullable=False),
        sa.Column("mean", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_item_scores_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "scorer_id", "item_id", name="pk_item_scores"),
    )
    op.execute(
        """
        INSERT INTO item_scores
            (run_id, scorer_id, item_id, position, score_sum, score_count, mean)
        SELECT run_id, scorer_id, item_id, position, score_sum, score_count,
               CASE WHEN score_count > 0 THEN score_sum / score_count END
        FROM (
            SELECT r.run_id AS run_id, s.scorer_id AS scorer_id, r.item_id AS item_id,
                   MIN(r.position) AS position,
                   COALESCE(SUM(CASE WHEN s.status = 'ready' THEN s.score END), 0.0)
                       AS score_sum,
                   COUNT(CASE WHEN s.status = 'ready' THEN s.score END) AS score_count
            FROM item_results r JOIN scores s ON s.result_id = r.id
            GROUP BY r.run_id, s.scorer_id, r.item_id
        ) AS per_item
        """
    )
    op.create_index(
        "ix_item_scores_ascending",
        "item_scores",
        ["run_id", "scorer_id", "mean", "position", "item_id"],
        sqlite_where=_NOT_NULL_MEAN,
        postgresql_where=_NOT_NULL_MEAN,
    )
    op.create_index(
        "ix_item_scores_descending",
        "item_scores",
        ["run_id", "scorer_id", sa.text("mean DESC"), "position", "item_id"],
        sqlite_where=_NOT_NULL_MEAN,
        postgresql_where=_NOT_NULL_MEAN,
    )
    op.create_index(
        "ix_item_results_items", "item_results", ["run_id", "position", "item_id", "repeat", "id"]
    )
    op.create_index(
        "ix_item_results_failed",
        "item_results",
        ["run_id", "position", "repeat", "item_id"],
        sqlite_where=sa.text("error IS NOT NULL"),
        postgresql_where=sa.text("error IS NOT NULL"),
    )
    op.create_index("ix_scores_ranking", "scores", ["result_id", "scorer_id", "status", "score"])
    op.create_index(
        "ix_scores_failed",
        "scores",
        ["result_id"],
        sqlite_where=sa.text("status = 'error'"),
        postgresql_where=sa.text("status = 'error'"),
    )


def downgrade() -> None:
    op.drop_index("ix_scores_failed", "scores")
    op.drop_index("ix_scores_ranking", "scores")
    op.drop_index("ix_item_results_failed", "item_results")
    op.drop_index("ix_item_results_items", "item_results")
    op.drop_index("ix_item_scores_descending", "item_scores")
    op.drop_index("ix_item_scores_ascending", "item_scores")
    op.drop_table("item_scores")
