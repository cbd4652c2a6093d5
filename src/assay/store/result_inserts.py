"""A batch of results inserted as driver SQL with parameters encoded here.

Why not ``conn.execute(item_results.insert(), rows)``: for each row SQLAlchemy builds a
parameter dict and runs every column's bind processor (the JSON serializer, the NUL escape
of ``NulSafeText``), which cost the store writer more than the database's own work for
the row (a profile of a 20,000-item run: ≈ 17 % of the writer thread against SQLite's
``executemany`` at ≈ 40 %). Here each row is one tuple built straight from the result's
attributes, each value encoded once exactly as the column type would have encoded it
(``codec.dumps`` for JSON, ``codec.escape_nul`` for NUL-safe text), and the three
statements go to the driver's ``executemany`` on the caller's connection, inside the
caller's transaction: a batch is still stored whole or not at all.

The column lists are the tables' own (``tables.py``), so the SQL cannot name a column the
schema lacks; ``tests/store/test_result_inserts.py`` pins that the stored rows equal the
SQLAlchemy path's, column by column, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from assay.store.codec import IdSource, dumps, escape_nul
from assay.store.results_codec import warnings_cell
from assay.store.tables import item_results, judge_calls, scores
from assay.types import Item, ItemResult

Row = tuple[Any, ...]


EncodedResult = tuple[Any, ...]
"""One result encoded for the store as ONE flat tuple: its item id (as the result has it),
how many ``scores`` rows and ``judge_calls`` rows it has, then its ``item_results`` row, its
``scores`` rows and its ``judge_calls`` rows one after the other (``_COLUMNS`` order).

Why one flat tuple of atomic values: the store writer's queue holds up to ``max_pending``
results for a while, long enough for the cyclic collector to promote what waits there to
its oldest generation, and every object promoted there counts toward the next full
collection, a walk of the whole heap (the caller's items included). An ``ItemResult`` is
about nine objects the collector tracks. A tuple holding only strings, numbers and ``None``
is untracked by the first collection that sees it, so it is never promoted. Flat, because
a tuple of tuples is untracked only once its inner tuples are, which may take the
collector one pass more (the order it walks survivors in is not their creation order),
by which time the outer one has been promoted (``tests/store/test_result_inserts.py``
pins that it is untracked after one collection). An exact ``tuple``: CPython untracks
only exact tuples, not a ``NamedTuple``'s instances."""

_HEADER = 3
"""Item id, number of score rows, number of judge call rows."""
_ITEM_WIDTH, _SCORE_WIDTH, _CALL_WIDTH = 14, 15, 19
"""Columns of each row (``_COLUMNS``; ``tests/store/test_result_inserts.py`` checks them)."""


def result_key(encoded: EncodedResult) -> tuple[str, int]:
    """(item id, repeat) of an encoded result: the run's unique key of a result."""
    return encoded[0], encoded[_HEADER + 3]


def target_failed(encoded: EncodedResult) -> bool:
    """Whether the encoded result holds a target error (its ``error`` cell)."""
    return encoded[_HEADER + 8] is not None


def result_scores(encoded: EncodedResult) -> Iterator[tuple[str, int, str, float | None]]:
    """(item id, position, scorer id, score) of each score of an encoded result; the score
    is ``None`` unless its status is ``ready`` (and it has a number)."""
    item_id, scored, position = encoded[0], encoded[1], encoded[_HEADER + 4]
    start = _HEADER + _ITEM_WIDTH
    for at in range(start, start + scored * _SCORE_WIDTH, _SCORE_WIDTH):
        ready = encoded[at + 5] == "ready"
        yield item_id, position, encoded[at + 2], encoded[at + 6] if ready else None


def encode_results(
    run_id: str, results: Sequence[ItemResult] | Sequence[EncodedResult]
) -> list[EncodedResult]:
    """``encode_result`` of each result not encoded yet, their ids drawn in one go."""
    new_id = IdSource(2 * len(results))
    return [
        encode_result(run_id, result, new_id) if isinstance(result, ItemResult) else result
        for result in results
    ]


def result_rows_of(encoded: Sequence[EncodedResult]) -> tuple[list[Row], list[Row], list[Row]]:
    """The ``item_results``, ``scores`` and ``judge_calls`` rows of encoded results."""
    items: list[Row] = []
    score_rows: list[Row] = []
    calls: list[Row] = []
    for result in encoded:
        at = _HEADER + _ITEM_WIDTH
        items.append(result[_HEADER:at])
        for _ in range(result[1]):
            score_rows.append(result[at : at + _SCORE_WIDTH])
            at += _SCORE_WIDTH
        for _ in range(result[2]):
            calls.append(result[at : at + _CALL_WIDTH])
            at += _CALL_WIDTH
    return items, score_rows, calls


def insert_result_rows(conn: Connection, run_id: str, encoded: Sequence[EncodedResult]) -> None:
    """Insert the ``item_results``, ``scores`` and ``judge_calls`` rows of ``encoded`` in
    the caller's transaction (a duplicate (item, repeat) raises ``IntegrityError``)."""
    items, score_rows, calls = result_rows_of(encoded)
    if conn.dialect.name == "postgresql":
        _copy(conn, items, score_rows, calls)
        return
    sql = _statements(conn.dialect.name, conn.dialect.paramstyle)
    conn.exec_driver_sql(sql[0], items)
    if score_rows:
        conn.exec_driver_sql(sql[1], score_rows)
    if calls:
        conn.exec_driver_sql(sql[2], calls)


def _copy(conn: Connection, *tables: list[Row]) -> None:
    """PostgreSQL: the rows through ``COPY … FROM STDIN`` on the transaction's own
    connection. Why not ``executemany``: one statement per row costs the server a bind
    and an execution each (and psycopg's pipeline the client time to frame them); COPY
    took ≈ 40 % less client CPU and less wall time for the same rows (benchmarks/HISTORY.md,
    2026-11-27 storewrite). JSON columns take the JSON text, as ``json``'s input
    function reads it. A refused row (a duplicate key) fails the COPY and so the whole
    transaction; its error is raised as SQLAlchemy's, as an ``INSERT`` would have been."""
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    cursor = dbapi.cursor()
    try:
        for (table, names), rows in zip(_COLUMNS, tables, strict=True):
            if not rows:
                continue
            statement = _copy_sql(table, names)
            try:
                with cursor.copy(statement) as copy:
                    for row in rows:
                        copy.write_row(row)
            except conn.dialect.loaded_dbapi.Error as exc:
                raise sa.exc.DBAPIError.instance(
                    statement, None, exc, conn.dialect.loaded_dbapi.Error
                ) from exc
    finally:
        cursor.close()


@cache
def _copy_sql(table: sa.Table, names: tuple[str, ...]) -> str:
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"COPY {table.name} ({quoted}) FROM STDIN"


def encode_result(run_id: str, result: ItemResult, new_id: Callable[[], str]) -> EncodedResult:
    """``result``'s rows in the column order of ``_COLUMNS``, each value encoded once as
    its column type would have encoded it; ``new_id`` gives the result's and each score's
    id. Raises what the JSON encoder raises for a value it cannot write."""
    result_id = new_id()
    error = result.error
    input_, output, expected, meta = (
        result.input,
        result.output,
        result.expected_output,
        result.meta,
    )
    warnings = warnings_cell(result)
    out: list[Any] = [
        result.item_id,
        len(result.scores),
        0,
        result_id,
        run_id,
        escape_nul(result.item_id),
        result.repeat,
        result.position,
        None if input_ is None else dumps(input_),
        None if output is None else dumps(output),
        None if expected is None else dumps(expected),
        None if error is None else dumps(error.model_dump(mode="json")),
        result.latency_ms,
        None if warnings is None else dumps(warnings),
        result.started_at,
        result.completed_at,
        None if meta is None else dumps(meta),
    ]
    calls: list[Any] = []
    for scorer_id, score in result.scores.items():
        score_id = new_id()
        corpus, reason, score_error = score.corpus, score.reason, score.error
        out.extend(
            (
                score_id,
                result_id,
                scorer_id,
                score.scorer_label,
                score.call_id,
                score.status,
                score.score,
                dumps(score.values) if score.values else None,
                None if corpus is None else dumps(corpus),
                None if reason is None else escape_nul(reason),
                dumps(score.steps) if score.steps else None,
                dumps(score.prompts) if score.prompts else None,
                None if score_error is None else dumps(score_error.model_dump(mode="json")),
                score.not_scorable_step,
                score.duration_ms,
            )
        )
        for seq, call in enumerate(score.judge_calls):
            usage, call_output = call.usage, call.output
            raw, call_error = call.raw_output, call.error
            out[2] += 1
            calls.extend(
                (
                    score_id,
                    seq,
                    call.step,
                    call.status,
                    call.model_id,
                    call.provider,
                    call.attempts,
                    call.duration_ms,
                    escape_nul(call.prompt),
                    None if call_output is None else dumps(call_output),
                    None if raw is None else escape_nul(raw),
                    None if call_error is None else escape_nul(call_error),
                    call.cached,
                    call.cost_usd,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.total_tokens,
                    usage.reasoning_tokens,
                    usage.cached_input_tokens,
                )
            )
    out.extend(calls)
    return tuple(out)


_COLUMNS: tuple[tuple[sa.Table, tuple[str, ...]], ...] = (
    (
        item_results,
        (
            "id",
            "run_id",
            "item_id",
            "repeat",
            "position",
            "input",
            "output",
            "expected_output",
            "error",
            "latency_ms",
            "warnings",
            "started_at",
            "completed_at",
            "meta",
        ),
    ),
    (
        scores,
        (
            "id",
            "result_id",
            "scorer_id",
            "scorer_name",
            "call_id",
            "status",
            "score",
            "values",
            "corpus",
            "reason",
            "steps",
            "prompts",
            "error",
            "not_scorable_step",
            "duration_ms",
        ),
    ),
    (
        judge_calls,
        (
            "score_id",
            "seq",
            "step",
            "status",
            "model_id",
            "provider",
            "attempts",
            "duration_ms",
            "prompt",
            "output",
            "raw_output",
            "error",
            "cached",
            "cost_usd",
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "reasoning_tokens",
            "cached_input_tokens",
        ),
    ),
)
"""The column order of ``_rows``' tuples (database names: ``scores.values``, not the Python
key ``values_``); ``judge_calls.id`` is left to the database, as before."""


RUN_ITEM_COLUMNS = (
    "run_id",
    "position",
    "item_id",
    "input",
    "output",
    "expected_output",
    "context",
    "metadata",
)
"""The column order of ``run_item_row``'s tuples (``run_items``: a run's inline items)."""


def run_item_row(run_id: str, position: int, item: Item) -> Row:
    """A ``run_items`` row as ``datasets_repo.item_columns`` and the column types would
    have stored it (the same columns, encoded once here)."""
    input_, output, expected, context = item.input, item.output, item.expected_output, item.context
    return (
        run_id,
        position,
        escape_nul(item.id),
        None if input_ is None else dumps(input_),
        None if output is None else dumps(output),
        None if expected is None else dumps(expected),
        None if context is None else dumps(context),
        dumps(item.metadata) if item.metadata else None,
    )


def _statements(dialect: str, paramstyle: str) -> tuple[str, str, str]:
    """The three INSERTs of a batch of results for a dialect."""
    item_sql, score_sql, call_sql = (
        insert_sql(table, names, dialect, paramstyle) for table, names in _COLUMNS
    )
    return item_sql, score_sql, call_sql


@cache
def insert_sql(table: sa.Table, names: tuple[str, ...], dialect: str, paramstyle: str) -> str:
    """``INSERT INTO table (names) VALUES (…)`` as driver SQL: ``?`` or ``%s`` markers, and
    on PostgreSQL a cast of each JSON parameter (sent as JSON text, ``codec.dumps``) to
    ``json`` (kept as written: ``tables.JSONType``). Every column name is quoted
    (``"values"`` is a keyword), which SQLite and PostgreSQL read alike."""
    marker = "?" if paramstyle == "qmark" else "%s"
    json_marker = f"CAST({marker} AS JSON)" if dialect == "postgresql" else marker
    types = {column.name: column.type for column in table.columns}
    markers = ", ".join(
        json_marker if isinstance(types[name], sa.JSON) else marker for name in names
    )
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"INSERT INTO {table.name} ({quoted}) VALUES ({markers})"
