"""The store's tables as SQLAlchemy Core metadata (the query side of the schema).

The migrations in ``migrations/versions`` create the same tables; a test compares the two
(``alembic.autogenerate.compare_metadata``) so they cannot drift apart.

Layout and why:

* ``dataset_items`` keeps one row per item *version* (SCD type 2, reference §5.2): a row is
  valid from ``valid_from`` up to, not including, ``valid_to`` (``NULL``: still current);
  deletes leave a tombstone row. A partial unique index allows one open row per item id, so
  the database itself refuses two current copies of an item.
* ``item_results`` / ``scores`` / ``judge_calls`` use client-generated string ids, so one
  batch of results is three ``executemany`` inserts with no round trip for generated keys.
* Timestamps are unix seconds (``Double``), like ``RunInfo.created_at``.
* JSON columns hold the JSON text as written (``JSONType``: ``json`` on PostgreSQL,
  TEXT affinity on SQLite), so a value reads back exactly; ``None`` is SQL ``NULL``.
* A score's named values (``ScoreResult.values``) are a JSON object in ``scores.values``
  (Python key ``values_``: ``Table.c.values`` is a method), not rows of a side table: a score
  stays one row, ``score_rows`` reads them in its one query without a join, and a scorer
  without values costs a ``NULL``. The corpus payload is ``scores.corpus`` (JSON), read
  only by the full results and by ``corpus_rows``.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.compiler import compiles

from assay.store.codec import escape_nul, unescape_nul

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Deterministic constraint names, so later migrations (SQLite batch mode) can address them."""

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

SQLITE_JSON_TYPE = "JSON_TEXT"
"""The declared type of a JSON column on SQLite (migration 0014). The name decides the
column's affinity: ``JSON`` gives NUMERIC affinity, under which SQLite converts a stored
JSON text that reads as a number (``1.0``, ``1e-07``, ``18446744073709551616``) to an
INTEGER or REAL, so ``1.0`` came back as ``1`` and ``2**64`` as a float; a name holding
``TEXT`` gives TEXT affinity, under which the JSON text is stored as written."""


class ExactJSON(sa.JSON):
    """SQLAlchemy's JSON, declared ``JSON_TEXT`` on SQLite (``SQLITE_JSON_TYPE``): the same
    serialiser, deserialiser and ``NULL`` handling, only the affinity differs."""


@compiles(ExactJSON, "sqlite")
def _sqlite_json_type(type_: ExactJSON, compiler: Any, **kw: Any) -> str:
    return SQLITE_JSON_TYPE


JSONType = ExactJSON(none_as_null=True).with_variant(
    postgresql.JSON(none_as_null=True), "postgresql"
)
"""A JSON value, read back exactly as written: its text on both databases.

Why ``json`` and not ``jsonb`` on PostgreSQL (migration 0014): ``jsonb`` keeps a number as
``numeric``, which has no exponent, no negative zero and no float/integer distinction in
its output, so ``1e22`` came back as the integer ``10000000000000000000000``, ``1.5e300``
as a 301-digit integer and ``-0.0`` as ``0.0``; it also reorders object keys. ``json``
keeps the text (checked for validity) and the store never needs ``jsonb``'s operators or
indexes: no query looks inside a JSON column (text search reads a lower-cased copy of the
text on PostgreSQL, migration 0010), so nothing is lost, and writing or reading the text
is cheaper than building or printing ``jsonb``. Mind that ``json`` has no equality
operator: a query that compares, groups or ``DISTINCT``s a JSON column fails on PostgreSQL
(none does; compare a cast to text if one must)."""


def compare_type(
    context: Any,
    inspected_column: Any,
    metadata_column: Any,
    inspected_type: sa.types.TypeEngine[Any],
    metadata_type: sa.types.TypeEngine[Any],
) -> bool | None:
    """Alembic's type comparison (``compare_type``), which reflects SQLite's ``JSON_TEXT``
    by its affinity, as ``TEXT``: a JSON column is as described when SQLite reports a text
    type (an old ``JSON`` column is reflected as JSON: a difference). ``None``: alembic's
    own comparison for every other column."""
    if context.dialect.name == "sqlite" and isinstance(metadata_type, sa.JSON):
        return not isinstance(inspected_type, sa.Text)
    return None


RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
"""64-bit surrogate key; plain ``INTEGER`` on SQLite so it aliases the rowid."""

Timestamp: sa.Double[float] = sa.Double()


class NulSafeText(sa.types.TypeDecorator[str]):
    """Text that may hold NUL characters: PostgreSQL refuses NUL in text, so it is escaped
    reversibly on the way in and restored on the way out (``codec.escape_nul``), on every
    backend, so a row reads back the same wherever it was written."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        return None if value is None else escape_nul(value)

    def process_result_value(self, value: str | None, dialect: sa.Dialect) -> str | None:
        return None if value is None else unescape_nul(value)


class NulSafeString(sa.types.TypeDecorator[str]):
    """``NulSafeText`` for bounded strings (item ids, names)."""

    impl = sa.String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        return None if value is None else escape_nul(value)

    def process_result_value(self, value: str | None, dialect: sa.Dialect) -> str | None:
        return None if value is None else unescape_nul(value)


datasets = sa.Table(
    "datasets",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("description", NulSafeText(), nullable=True),
    sa.Column("metadata", JSONType, nullable=True, key="meta"),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("item_count", sa.Integer(), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
)

dataset_versions = sa.Table(
    "dataset_versions",
    metadata,
    sa.Column(
        "dataset_id",
        sa.String(64),
        sa.ForeignKey("datasets.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("version", sa.Integer(), primary_key=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("note", NulSafeText(), nullable=True),
    sa.Column("added", sa.Integer(), nullable=False),
    sa.Column("updated", sa.Integer(), nullable=False),
    sa.Column("deleted", sa.Integer(), nullable=False),
    sa.Column("item_count", sa.Integer(), nullable=False),
)

dataset_items = sa.Table(
    "dataset_items",
    metadata,
    sa.Column("row_id", RowId, primary_key=True, autoincrement=True),
    sa.Column(
        "dataset_id",
        sa.String(64),
        sa.ForeignKey("datasets.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("item_id", NulSafeString(255), nullable=False),
    sa.Column("valid_from", sa.Integer(), nullable=False),
    sa.Column("valid_to", sa.Integer(), nullable=True),
    sa.Column("is_deleted", sa.Boolean(), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("input", JSONType, nullable=True),
    sa.Column("output", JSONType, nullable=True),
    sa.Column("expected_output", JSONType, nullable=True),
    sa.Column("context", JSONType, nullable=True),
    sa.Column("metadata", JSONType, nullable=True, key="meta"),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index("ix_dataset_items_history", "dataset_id", "item_id", "valid_from", unique=True),
    sa.Index("ix_dataset_items_position", "dataset_id", "position"),
    sa.Index(
        "uq_dataset_items_open",
        "dataset_id",
        "item_id",
        unique=True,
        sqlite_where=sa.text("valid_to IS NULL"),
        postgresql_where=sa.text("valid_to IS NULL"),
    ),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=True),
    sa.Column(
        "dataset_id",
        sa.String(64),
        sa.ForeignKey("datasets.id", ondelete="SET NULL"),
        nullable=True,
    ),
    sa.Column("dataset_name", sa.String(255), nullable=True),
    sa.Column("dataset_version", sa.Integer(), nullable=True),
    sa.Column("data_source", NulSafeText(), nullable=True),
    sa.Column("target_kind", sa.String(32), nullable=False),
    sa.Column("target_label", NulSafeText(), nullable=False),
    sa.Column("target", JSONType, nullable=False),
    sa.Column("scorers", JSONType, nullable=False),
    sa.Column("concurrency", sa.Integer(), nullable=False),
    sa.Column("repeats", sa.Integer(), nullable=False),
    sa.Column("threshold", sa.Double(), nullable=True),
    sa.Column("total_items", sa.Integer(), nullable=True),
    sa.Column("metadata", JSONType, nullable=True, key="meta"),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("completed_results", sa.Integer(), nullable=False),
    sa.Column("failed_results", sa.Integer(), nullable=False),
    sa.Column("summary", JSONType, nullable=True),
    sa.Column("lease_owner", sa.String(255), nullable=True),
    sa.Column("lease_expires_at", Timestamp, nullable=True),
    sa.Column("backend", sa.String(16), nullable=True),
    sa.Column("workers", sa.Integer(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("started_at", Timestamp, nullable=True),
    sa.Column("completed_at", Timestamp, nullable=True),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Index("ix_runs_created_at", "created_at"),
    sa.Index("ix_runs_dataset_id", "dataset_id", "created_at"),
    sa.Index("ix_runs_dataset_name", "dataset_name", "created_at"),
)

run_items = sa.Table(
    "run_items",
    metadata,
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("position", sa.Integer(), primary_key=True),
    sa.Column("item_id", NulSafeString(255), nullable=False),
    sa.Column("input", JSONType, nullable=True),
    sa.Column("output", JSONType, nullable=True),
    sa.Column("expected_output", JSONType, nullable=True),
    sa.Column("context", JSONType, nullable=True),
    sa.Column("metadata", JSONType, nullable=True, key="meta"),
    sa.UniqueConstraint("run_id", "item_id", name="uq_run_items_item"),
)

item_results = sa.Table(
    "item_results",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("item_id", NulSafeString(255), nullable=False),
    sa.Column("repeat", sa.Integer(), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("input", JSONType, nullable=True),
    sa.Column("output", JSONType, nullable=True),
    sa.Column("expected_output", JSONType, nullable=True),
    sa.Column("error", JSONType, nullable=True),
    sa.Column("latency_ms", sa.Double(), nullable=True),
    sa.Column("warnings", JSONType, nullable=True),
    sa.Column("started_at", Timestamp, nullable=False),
    sa.Column("completed_at", Timestamp, nullable=False),
    # how a live row came to be stored (sampling decision, rate, fate); NULL for run rows
    sa.Column("meta", JSONType, nullable=True),
    sa.UniqueConstraint("run_id", "item_id", "repeat", name="uq_item_results_key"),
    sa.Index("ix_item_results_order", "run_id", "position", "repeat", "item_id"),
    # covering: grouping a run's results per item (position, item id) and finding their
    # ids needs no table read and no sort (issue 25)
    sa.Index("ix_item_results_items", "run_id", "position", "item_id", "repeat", "id"),
    # the few failed results of a run, without reading every row's ``error`` (errors only)
    sa.Index(
        "ix_item_results_failed",
        "run_id",
        "position",
        "repeat",
        "item_id",
        sqlite_where=sa.text("error IS NOT NULL"),
        postgresql_where=sa.text("error IS NOT NULL"),
    ),
)

scores = sa.Table(
    "scores",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column(
        "result_id",
        sa.String(64),
        sa.ForeignKey("item_results.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("scorer_id", sa.String(255), nullable=False),
    sa.Column("scorer_name", sa.String(255), nullable=False),
    sa.Column("call_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("score", sa.Double(), nullable=True),
    sa.Column("values", JSONType, nullable=True, key="values_"),
    sa.Column("corpus", JSONType, nullable=True),
    sa.Column("reason", NulSafeText(), nullable=True),
    sa.Column("steps", JSONType, nullable=True),
    sa.Column("prompts", JSONType, nullable=True),
    sa.Column("error", JSONType, nullable=True),
    sa.Column("not_scorable_step", sa.String(16), nullable=True),
    sa.Column("duration_ms", sa.Double(), nullable=False),
    sa.UniqueConstraint("result_id", "scorer_id", name="uq_scores_result_scorer"),
    # covering: a scorer's ready score of a result without reading the row (its reason,
    # prompts, steps), for ranking and score filters (issue 25)
    sa.Index("ix_scores_ranking", "result_id", "scorer_id", "status", "score"),
    sa.Index(
        "ix_scores_failed",
        "result_id",
        sqlite_where=sa.text("status = 'error'"),
        postgresql_where=sa.text("status = 'error'"),
    ),
)

item_scores = sa.Table(
    "item_scores",
    metadata,
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("scorer_id", sa.String(255), primary_key=True),
    sa.Column("item_id", NulSafeString(255), primary_key=True),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("score_sum", sa.Double(), nullable=False),
    sa.Column("score_count", sa.Integer(), nullable=False),
    sa.Column("mean", sa.Double(), nullable=True),
    sa.Index(
        "ix_item_scores_ascending",
        "run_id",
        "scorer_id",
        "mean",
        "position",
        "item_id",
        sqlite_where=sa.text("mean IS NOT NULL"),
        postgresql_where=sa.text("mean IS NOT NULL"),
    ),
)
"""Per (run, scorer, item): the sum and count of the item's ready scores over its repeats
and their ``mean`` (``NULL``: none ready), with the item's position; a row for every item
that has a score of the scorer, whatever its status. Written with the results
(``store.item_scores.add_item_scores``, in their transaction), so "sort a 100,000-item run
by a scorer" is a walk down one index instead of grouping and sorting every result per
request (issue 25). Two partial indexes, because a descending rank still breaks ties by
ascending position, which one index cannot give in both directions."""
sa.Index(
    "ix_item_scores_descending",
    item_scores.c.run_id,
    item_scores.c.scorer_id,
    item_scores.c.mean.desc(),
    item_scores.c.position,
    item_scores.c.item_id,
    sqlite_where=sa.text("mean IS NOT NULL"),
    postgresql_where=sa.text("mean IS NOT NULL"),
)


judge_calls = sa.Table(
    "judge_calls",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column(
        "score_id", sa.String(64), sa.ForeignKey("scores.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("step", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("model_id", sa.String(255), nullable=False),
    sa.Column("provider", sa.String(255), nullable=True),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("duration_ms", sa.Double(), nullable=False),
    sa.Column("prompt", NulSafeText(), nullable=False),
    sa.Column("output", JSONType, nullable=True),
    sa.Column("raw_output", NulSafeText(), nullable=True),
    sa.Column("error", NulSafeText(), nullable=True),
    sa.Column("cached", sa.Boolean(), nullable=False),
    sa.Column("cost_usd", sa.Double(), nullable=True),
    sa.Column("input_tokens", sa.Integer(), nullable=False),
    sa.Column("output_tokens", sa.Integer(), nullable=False),
    sa.Column("total_tokens", sa.Integer(), nullable=False),
    sa.Column("reasoning_tokens", sa.Integer(), nullable=True),
    sa.Column("cached_input_tokens", sa.Integer(), nullable=True),
    sa.UniqueConstraint("score_id", "seq", name="uq_judge_calls_seq"),
)

model_cache = sa.Table(
    "model_cache",
    metadata,
    sa.Column("key", sa.String(128), primary_key=True),
    sa.Column("value", NulSafeText(), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
)

calibration_certificates = sa.Table(
    "calibration_certificates",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("fingerprint", sa.String(128), nullable=False),
    sa.Column("fingerprint_parts", JSONType, nullable=False),
    sa.Column("scorer_type", sa.String(255), nullable=False),
    sa.Column("scorer_label", sa.String(255), nullable=False),
    sa.Column("judge_model", sa.String(255), nullable=True),
    sa.Column("data_key", NulSafeText(), nullable=False),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    ),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("n", sa.Integer(), nullable=False),
    sa.Column("statistics", JSONType, nullable=False),
    sa.Column("gates", JSONType, nullable=False),
    sa.Column("passed", sa.Boolean(), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index("ix_calibration_certificates_fingerprint", "fingerprint", "created_at"),
    sa.Index("ix_calibration_certificates_scorer", "scorer_type", "scorer_label", "created_at"),
)
"""A calibration's outcome bound to a scorer fingerprint and the labelled data (migration 0004)."""

optimizations = sa.Table(
    "optimizations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("config", JSONType, nullable=False),
    sa.Column("run_dir", sa.Text(), nullable=False),
    sa.Column("progress", JSONType, nullable=False),
    sa.Column("result", JSONType, nullable=True),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
)
"""A prompt optimization: config, status, progress, result (migration 0005)."""

optimization_candidates = sa.Table(
    "optimization_candidates",
    metadata,
    sa.Column(
        "optimization_id",
        sa.String(64),
        sa.ForeignKey("optimizations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("idx", sa.Integer(), primary_key=True),
    sa.Column("candidate_hash", sa.String(64), nullable=False),
    sa.Column("components", JSONType, nullable=False),
    sa.Column("parents", JSONType, nullable=False),
    sa.Column("changed", JSONType, nullable=False),
    sa.Column("iteration", sa.Integer(), nullable=False),
    sa.Column("val_score", sa.Double(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
)

optimization_evaluations = sa.Table(
    "optimization_evaluations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column(
        "optimization_id",
        sa.String(64),
        sa.ForeignKey("optimizations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    ),
    sa.Column("candidate_hash", sa.String(64), nullable=False),
    sa.Column("split", sa.String(16), nullable=False),
    sa.Column("iteration", sa.Integer(), nullable=False),
    sa.Column("metric_calls", sa.Integer(), nullable=False),
    sa.Column("mean_score", sa.Double(), nullable=True),
    sa.Column("cost_usd", sa.Double(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index("ix_optimization_evaluations_optimization", "optimization_id", "created_at"),
)

optimization_reflections = sa.Table(
    "optimization_reflections",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column(
        "optimization_id",
        sa.String(64),
        sa.ForeignKey("optimizations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("iteration", sa.Integer(), nullable=False),
    sa.Column("component", sa.Text(), nullable=False),
    sa.Column("prompt", sa.Text(), nullable=False),
    sa.Column("answer", sa.Text(), nullable=True),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("cost_usd", sa.Double(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index("ix_optimization_reflections_optimization", "optimization_id", "created_at"),
)

item_annotations = sa.Table(
    "annotations",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("item_id", NulSafeString(255), nullable=False),
    sa.Column("repeat", sa.Integer(), nullable=True),
    sa.Column("scorer_id", sa.String(255), nullable=True),
    sa.Column("author", NulSafeString(255), nullable=False),
    sa.Column("label", NulSafeText(), nullable=True),
    sa.Column("score", sa.Double(), nullable=True),
    sa.Column("comment", NulSafeText(), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index("ix_annotations_item", "run_id", "item_id", "id"),
)

run_tags = sa.Table(
    "run_tags",
    metadata,
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("tag", NulSafeString(255), primary_key=True),
    sa.Index("ix_run_tags_tag", "tag"),
)
"""Labels on runs (``git.commit=abc123``, ``baseline=main``): many per run, a run found by
any of them (``runs.list(tag=...)``, ``runs.latest_with_tag``). A side table, not a JSON
column, so "the newest run tagged X" is an indexed lookup on SQLite and PostgreSQL alike."""

work_units = sa.Table(
    "work_units",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("repeat", sa.Integer(), nullable=False),
    sa.Column("item_id", NulSafeString(255), nullable=False),
    sa.Column("input", JSONType, nullable=True),
    sa.Column("output", JSONType, nullable=True),
    sa.Column("expected_output", JSONType, nullable=True),
    sa.Column("context", JSONType, nullable=True),
    sa.Column("metadata", JSONType, nullable=True, key="meta"),
    sa.Column("lease_owner", sa.String(255), nullable=True),
    sa.Column("lease_expires_at", Timestamp, nullable=True),
    sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
    sa.UniqueConstraint("run_id", "position", "repeat", name="uq_work_units_key"),
)
"""The units a scaled-out run (``backend="ray"``) still has to score, one row per (run,
position, repeat), carrying its item so a worker needs nothing but the store. A worker
claims a batch by writing its lease (owner, expiry) on unleased or expired rows; a unit's
row is deleted in the transaction that stores its result, by the owner only, so a unit
whose worker died is claimed again and no result is stored twice."""

compare_statistics = sa.Table(
    "compare_statistics",
    metadata,
    sa.Column(
        "baseline_id",
        sa.String(64),
        sa.ForeignKey("runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("threshold", sa.Double(), primary_key=True),
    sa.Column("fingerprint", sa.String(255), nullable=False),
    sa.Column("summary", sa.Text(), nullable=False),
    sa.Column("full", sa.Text(), nullable=False),
    sa.Column("computed_at", sa.Double(), nullable=False),
)
"""The paired statistics of a run against a baseline at a threshold (``server.run_compare``),
computed once and kept: the bootstrap over 100,000 paired items takes seconds, so a server
restart or another worker reads them instead (issue 25). ``fingerprint`` says what they
were computed from (both runs' status, counts and completion time): a row whose
fingerprint no longer matches is stale and is replaced. ``summary`` is the JSON of the
statistics without their per-item lists (what a compare page shows, a few KB), ``full``
with them (megabytes at 100,000 items: read only to page the lists). Text, not JSON: the
store never looks inside, and PostgreSQL's JSONB would re-parse megabytes on each read.
Deleting either run deletes the row."""

TEXT_INDEX = "item_results_text"
"""PostgreSQL only (migrations 0010, 0012): a lower-cased copy of each result's input,
output and expected output with its run and item id, kept by triggers on
``item_results`` and searched by ``run_queries``. Written by SQL triggers, never by
Core, so ``metadata`` does not describe it; ``is_described`` keeps it (and any table or
index named after it) out of the metadata comparison."""


def is_described(name: str | None, type_: str, parent_names: object) -> bool:
    """Whether schema object ``name`` is one ``metadata`` describes (alembic's
    ``include_name`` hook): everything but the SQLite text index's tables and index."""
    return name is None or not name.startswith(TEXT_INDEX)
