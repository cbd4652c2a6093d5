"""Initial schema: datasets (SCD-2 items), runs, results, scores, judge calls, model cache.

Revision ID: 0001
Revises:
Create Date: 2026-11-21

Frozen on purpose: a migration describes the schema as it was at its revision, so it does
not import ``assay.store.tables`` (which keeps changing); a test checks the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")
ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _json(name: str, nullable: bool = True) -> sa.Column[object]:
    return sa.Column(name, JSON, nullable=nullable)


def _time(name: str, nullable: bool = False) -> sa.Column[float]:
    return sa.Column(name, sa.Double(), nullable=nullable)


def _fk(column: str, target: str, table: str, ondelete: str) -> sa.ForeignKeyConstraint:
    referred = target.split(".")[0]
    return sa.ForeignKeyConstraint(
        [column], [target], name=f"fk_{table}_{column}_{referred}", ondelete=ondelete
    )


def _item_content() -> list[sa.Column[object]]:
    return [
        _json("input"),
        _json("output"),
        _json("expected_output"),
        _json("context"),
        _json("metadata"),
    ]


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        _json("metadata"),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_datasets"),
        sa.UniqueConstraint("name", name="uq_datasets_name"),
    )
    op.create_table(
        "dataset_versions",
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        _time("created_at"),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("updated", sa.Integer(), nullable=False),
        sa.Column("deleted", sa.Integer(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        _fk("dataset_id", "datasets.id", "dataset_versions", "CASCADE"),
        sa.PrimaryKeyConstraint("dataset_id", "version", name="pk_dataset_versions"),
    )
    op.create_table(
        "dataset_items",
        sa.Column("row_id", ROW_ID, autoincrement=True, nullable=False),
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        sa.Column("valid_from", sa.Integer(), nullable=False),
        sa.Column("valid_to", sa.Integer(), nullable=True),
        sa.Column("is_deleted", sa.Boolean(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        *_item_content(),
        _time("created_at"),
        _fk("dataset_id", "datasets.id", "dataset_items", "CASCADE"),
        sa.PrimaryKeyConstraint("row_id", name="pk_dataset_items"),
    )
    op.create_index(
        "ix_dataset_items_history",
        "dataset_items",
        ["dataset_id", "item_id", "valid_from"],
        unique=True,
    )
    op.create_index("ix_dataset_items_position", "dataset_items", ["dataset_id", "position"])
    op.create_index(
        "uq_dataset_items_open",
        "dataset_items",
        ["dataset_id", "item_id"],
        unique=True,
        sqlite_where=sa.text("valid_to IS NULL"),
        postgresql_where=sa.text("valid_to IS NULL"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("dataset_id", sa.String(64), nullable=True),
        sa.Column("dataset_name", sa.String(255), nullable=True),
        sa.Column("dataset_version", sa.Integer(), nullable=True),
        sa.Column("data_source", sa.Text(), nullable=True),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_label", sa.Text(), nullable=False),
        _json("target", nullable=False),
        _json("scorers", nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("repeats", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Double(), nullable=True),
        sa.Column("total_items", sa.Integer(), nullable=True),
        _json("metadata"),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("completed_results", sa.Integer(), nullable=False),
        sa.Column("failed_results", sa.Integer(), nullable=False),
        _json("summary"),
        _time("created_at"),
        _time("started_at", nullable=True),
        _time("completed_at", nullable=True),
        _time("updated_at"),
        _fk("dataset_id", "datasets.id", "runs", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_created_at", "runs", ["created_at"])
    op.create_index("ix_runs_dataset_id", "runs", ["dataset_id", "created_at"])
    op.create_index("ix_runs_dataset_name", "runs", ["dataset_name", "created_at"])
    op.create_table(
        "run_items",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        *_item_content(),
        _fk("run_id", "runs.id", "run_items", "CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "position", name="pk_run_items"),
        sa.UniqueConstraint("run_id", "item_id", name="uq_run_items_item"),
    )
    op.create_table(
        "item_results",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(255), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        _json("input"),
        _json("output"),
        _json("expected_output"),
        _json("error"),
        sa.Column("latency_ms", sa.Double(), nullable=True),
        _json("warnings"),
        _time("started_at"),
        _time("completed_at"),
        _fk("run_id", "runs.id", "item_results", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_item_results"),
        sa.UniqueConstraint("run_id", "item_id", "repeat", name="uq_item_results_key"),
    )
    op.create_index(
        "ix_item_results_order", "item_results", ["run_id", "position", "repeat", "item_id"]
    )
    op.create_table(
        "scores",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("result_id", sa.String(64), nullable=False),
        sa.Column("scorer_id", sa.String(255), nullable=False),
        sa.Column("scorer_name", sa.String(255), nullable=False),
        sa.Column("scorer_run_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        _json("steps"),
        _json("prompts"),
        _json("error"),
        sa.Column("not_scorable_step", sa.String(16), nullable=True),
        sa.Column("duration_ms", sa.Double(), nullable=False),
        _fk("result_id", "item_results.id", "scores", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_scores"),
        sa.UniqueConstraint("result_id", "scorer_id", name="uq_scores_result_scorer"),
    )
    op.create_table(
        "judge_calls",
        sa.Column("id", ROW_ID, autoincrement=True, nullable=False),
        sa.Column("score_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("model_id", sa.String(255), nullable=False),
        sa.Column("provider", sa.String(255), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Double(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        _json("output"),
        sa.Column("raw_output", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("total_tokens", sa.Integer(), nullable=False),
        sa.Column("reasoning_tokens", sa.Integer(), nullable=True),
        sa.Column("cached_input_tokens", sa.Integer(), nullable=True),
        _fk("score_id", "scores.id", "judge_calls", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_judge_calls"),
        sa.UniqueConstraint("score_id", "seq", name="uq_judge_calls_seq"),
    )
    op.create_table(
        "model_cache",
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        _time("created_at"),
        sa.PrimaryKeyConstraint("key", name="pk_model_cache"),
    )


def downgrade() -> None:
    for table in (
        "model_cache",
        "judge_calls",
        "scores",
        "item_results",
        "run_items",
        "runs",
        "dataset_items",
        "dataset_versions",
        "datasets",
    ):
        op.drop_table(table)
