"""A run's results streamed out for an export (CSV cells, JSON lines), straight from the
rows: no ``ItemResult`` per row (issue 25).

Why its own path: the export of a 100,000-item run spent most of its time building and
validating pydantic models (``model_construct`` alone was a third of a JSON-lines export)
and in one ``IN (...)`` query of 500 ids per chunk and table, compiled anew each time.
Here each chunk of results is one keyset-paged read; the CSV's scores come pivoted into the
same row (one outer join per scorer over the ``(result_id, scorer_id, ...)`` index), and a
JSON line is a plain dict in ``ItemResult``'s field order, serialised by pydantic-core's
``to_json``: the same bytes ``ItemResult.model_dump_json`` writes for the same values
(tests/operations/test_run_items.py holds the two paths equal on awkward text).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy import Row

from assay.store.codec import NUL_ESCAPE, loads, unescape_nul
from assay.store.db import Database
from assay.store.tables import item_results, judge_calls, scores

CHUNK = 5000
"""Results per read: large enough that a read's fixed cost vanishes per row, small enough
that a chunk of texts stays a few MB."""

_ORDER = (item_results.c.position, item_results.c.repeat, item_results.c.item_id)
_STORED_ORDER = (
    item_results.c.position,
    item_results.c.repeat,
    sa.type_coerce(item_results.c.item_id, sa.String),
)
"""``_ORDER`` compared as stored: a chunk's keys carry the item id as stored (NUL escaped),
because a bound tuple does not take the column's type, and an unescaped id held the read
on the same chunk for ever (an id with a NUL at a chunk's end)."""


FlatRow = tuple[Any, ...]
"""A result's export cells before CSV formatting: (item id, repeat, position, error
message, latency ms, input, output, expected output), then (status, score) of each scorer
asked for, ``None`` where it has none. A tuple, not an object per row: an export builds
100,000 of them."""


def json_text_value(text: str | None) -> Any:
    """A stored JSON text's value: a string without escapes is cut out of its quotes,
    anything else parsed like the column does (``codec.loads``). Always text: a JSON
    column keeps its text as written on both databases (``tables.JSONType``; migration
    0014 wrote back as text the numbers SQLite's old ``JSON`` affinity had converted)."""
    if text is None:
        return None
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text:
        inner = text[1:-1]
        if '"' not in inner and NUL_ESCAPE not in inner:
            return inner
    return loads(text)


def _plain(text: str) -> str:
    """A ``NulSafeString`` cell read without its type's processor."""
    return unescape_nul(text) if NUL_ESCAPE in text else text


class _Reader:
    """How JSON columns are read: as their text, parsed here (a plain string, the usual
    value, cut out of its quotes without a JSON parser). SQLite hands back the stored
    text; PostgreSQL casts its ``json`` to text (the stored text itself), because the
    driver's own parse (every value through ``json.loads`` on bytes) was 40 % of a
    PostgreSQL export's time."""

    def __init__(self, db: Database) -> None:
        self.raw = db.dialect == "sqlite"
        self.value: Callable[[Any], Any] = json_text_value

    def json(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        if self.raw:
            return sa.type_coerce(column, sa.Text).label(column.name)
        return sa.cast(column, sa.Text).label(column.name)

    def result_columns(self) -> list[sa.ColumnElement[Any]]:
        """A result's 13 export cells, in the order ``result_dict`` reads them."""
        t = item_results.c
        return [
            sa.type_coerce(t.item_id, sa.String).label("item_id"),
            t.repeat,
            t.position,
            self.json(t.input),
            self.json(t.output),
            self.json(t.expected_output),
            self.json(t.error),
            t.latency_ms,
            self.json(t.warnings),
            t.started_at,
            t.completed_at,
            t.id,
            self.json(t.meta),
        ]

    def score_columns(self) -> list[sa.ColumnElement[Any]]:
        """A score's 15 export cells, in the order ``_score_dict`` reads them."""
        s = scores.c
        return [
            s.result_id,
            s.scorer_id,
            s.scorer_name,
            s.call_id,
            s.status,
            s.score,
            self.json(s.values_),
            self.json(s.corpus),
            sa.type_coerce(s.reason, sa.Text).label("reason"),
            self.json(s.steps),
            self.json(s.prompts),
            self.json(s.error),
            s.not_scorable_step,
            s.duration_ms,
            s.id,
        ]


_T = TypeVar("_T")


def _overlapped(db: Database, reads: Generator[_T]) -> Iterator[_T]:
    """``reads``' chunks; on PostgreSQL the next chunk is read in a worker thread while
    the caller turns the current one into lines. The database works in its own process
    and the driver waits for it without the GIL, so an export costs about the larger of
    the two (the database's per-chunk joins, Python's rows) rather than their sum (issue
    25: at 100,000 rows the database's part was about as long as Python's). Not on
    SQLite: its work runs in this process, and a second thread only contends for the GIL
    (measured slower). One chunk ahead at most; when the caller stops early (a client
    that hangs up) the worker finishes its current read, is shut down, and ``reads`` is
    closed."""
    if db.dialect == "sqlite":
        yield from reads
        return
    done = object()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-export-read") as worker:
        try:
            ahead = worker.submit(next, reads, done)
            while (current := ahead.result()) is not done:
                ahead = worker.submit(next, reads, done)
                yield cast(_T, current)
        finally:
            worker.shutdown(wait=True, cancel_futures=True)
            reads.close()


def _tuples(result: sa.CursorResult[Any]) -> list[tuple[Any, ...]]:
    """A read's rows as the driver's tuples: no ``Row`` per row (a tenth of an export's
    time). Only for reads whose columns have no result processor (JSON read as text, item
    ids type-coerced, plain strings and numbers), so the values are the same."""
    try:
        return cast(list[tuple[Any, ...]], result.cursor.fetchall())
    finally:
        result.close()


def _keyset(
    query: sa.Select[Any], after: tuple[int, int, str] | None, last: tuple[int, int, str] | None
) -> sa.Select[Any]:
    if after is not None:
        query = query.where(sa.tuple_(*_STORED_ORDER) > sa.tuple_(*after))
    if last is not None:
        query = query.where(sa.tuple_(*_STORED_ORDER) <= sa.tuple_(*last))
    return query


def export_rows(
    db: Database, run_id: str, scorer_ids: Sequence[str], *, chunk: int = CHUNK
) -> Iterator[FlatRow]:
    """Every result of the run as a ``FlatRow`` with the (status, score) of each of
    ``scorer_ids``, in (position, repeat, item id) order: one read per ``chunk`` results,
    the scores pivoted into the result's row (an outer join per scorer)."""
    t = item_results.c
    read = _Reader(db)
    value = read.value
    joined: sa.FromClause = item_results
    pivot: list[sa.ColumnElement[Any]] = []
    for n, scorer_id in enumerate(scorer_ids):
        s = scores.alias(f"s{n}")
        joined = joined.outerjoin(s, sa.and_(s.c.result_id == t.id, s.c.scorer_id == scorer_id))
        pivot += [s.c.status, s.c.score]
    columns = [
        sa.type_coerce(t.item_id, sa.String).label("item_id"),
        t.repeat,
        t.position,
        read.json(t.error),
        t.latency_ms,
        read.json(t.input),
        read.json(t.output),
        read.json(t.expected_output),
        *pivot,
    ]
    base = sa.select(*columns).select_from(joined).where(t.run_id == run_id).order_by(*_ORDER)

    def reads() -> Generator[Sequence[Any]]:
        after: tuple[int, int, str] | None = None
        while True:
            with db.read() as conn:
                rows = _tuples(conn.execute(_keyset(base, after, None).limit(chunk)))
            yield rows
            if len(rows) < chunk:
                return
            last = rows[-1]
            after = (last[2], last[1], last[0])

    for rows in _overlapped(db, reads()):
        for row in rows:
            item_id, error = row[0], row[3]
            if error is not None:
                error = str(value(error).get("message", ""))
            yield (
                unescape_nul(item_id) if NUL_ESCAPE in item_id else item_id,
                row[1],
                row[2],
                error,
                row[4],
                value(row[5]),
                value(row[6]),
                value(row[7]),
                *row[8:],
            )


def result_dicts(db: Database, run_id: str, *, chunk: int = CHUNK) -> Iterator[dict[str, Any]]:
    """Every result of the run as the dict ``ItemResult.model_dump(mode="json")`` gives for
    ``RunRepository.results(trusted=True)``'s result (same keys, same order, same value
    types), in (position, repeat, item id) order, a result's scores in scorer id order.
    Three reads per ``chunk`` results (the results, their scores, their judge calls), each
    a range of the run's order rather than a list of ids; each dict is built as it is
    asked for, so few outlive a line (the collector's passes over a chunk of nested dicts
    cost as much as building them)."""
    t, s, j = item_results.c, scores.c, judge_calls.c
    read = _Reader(db)
    value = read.value
    items = sa.select(*read.result_columns()).where(t.run_id == run_id)
    in_run = item_results.join(scores, s.result_id == t.id)
    score_query = (
        sa.select(*read.score_columns())
        .select_from(in_run)
        .where(t.run_id == run_id)
        .order_by(*_ORDER, s.scorer_id)
    )
    call_query = (
        sa.select(judge_calls)
        .select_from(in_run.join(judge_calls, j.score_id == s.id))
        .where(t.run_id == run_id)
        .order_by(j.score_id, j.seq)
    )
    # PostgreSQL: the chunk's scores by an index lookup per result (LATERAL); joined on
    # a range of the run's order, its planner hash-joined the range against a scan of
    # every score in the store, chunk after chunk (≈ 175 ms a chunk at 200,000 scores)
    per_result = (
        sa.select(*(c for c in score_query.selected_columns))
        .where(s.result_id == t.id)
        .offset(0)  # a fence: a plain subquery would be flattened back into the hash join
        .lateral("chunk_scores")
    )
    lateral_scores = (
        sa.select(*per_result.c)
        .select_from(item_results.join(per_result, sa.true()))
        .where(t.run_id == run_id)
        .order_by(*_ORDER, per_result.c.scorer_id)
    )
    lateral_calls = (
        sa.select(judge_calls)
        .select_from(
            item_results.join(per_result, sa.true()).join(
                judge_calls, j.score_id == per_result.c.id
            )
        )
        .where(t.run_id == run_id)
        .order_by(j.score_id, j.seq)
    )
    by_scores, by_calls = (score_query, call_query) if read.raw else (lateral_scores, lateral_calls)

    def reads() -> Generator[tuple[Sequence[Any], Sequence[Any], Sequence[Any]]]:
        after: tuple[int, int, str] | None = None
        while True:
            with db.read() as conn:
                query = _keyset(items.order_by(*_ORDER), after, None).limit(chunk)
                rows = conn.execute(query).all()
                if not rows:
                    return
                last_row = rows[-1]
                last = (last_row[2], last_row[1], last_row[0])
                score_rows = conn.execute(_keyset(by_scores, after, last)).all()
                call_rows = conn.execute(_keyset(by_calls, after, last)).all()
            yield rows, score_rows, call_rows
            if len(rows) < chunk:
                return
            after = last

    for rows, score_rows, call_rows in _overlapped(db, reads()):
        calls: dict[str, list[dict[str, Any]]] = {}
        for call in call_rows:
            calls.setdefault(call.score_id, []).append(_call_dict(call))
        by_result: dict[str, dict[str, dict[str, Any]]] = {}
        for score in score_rows:  # a result's scores in scorer id order
            by_result.setdefault(score[0], {})[score[1]] = _score_dict(score, value, calls)
        for row in rows:
            yield result_dict(row, by_result.pop(row[11], {}), value)


def result_dict(
    row: Sequence[Any], scores: dict[str, dict[str, Any]], value: Callable[[Any], Any]
) -> dict[str, Any]:
    """A result's export dict from its row's first 13 cells (item id, repeat, position,
    input, output, expected output, error, latency, warnings, started, completed, result
    id, meta) and its scores' dicts; ``value`` decodes a stored JSON cell. The one builder
    of ``result_dicts`` and of the JSON lines' results that a view may change."""
    error, warnings = row[6], row[8]
    result: dict[str, Any] = {
        "item_id": _plain(row[0]),
        "repeat": row[1],
        "position": row[2],
        "input": value(row[3]),
        "output": value(row[4]),
        "expected_output": value(row[5]),
        "error": None if error is None else _target_error(value(error)),
        "latency_ms": row[7],
        "scores": scores,
    }
    if warnings is None:
        result["warnings"] = []
        result["started_at"] = row[9]
        result["completed_at"] = row[10]
        result["usage"] = result["cost_usd"] = result["samples"] = None
    else:
        result.update(_warnings_fields(value(warnings), row[9], row[10]))
    result["meta"] = value(row[12])
    return result


def _score_dict(
    row: tuple[Any, ...], value: Callable[[Any], Any], calls: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    error = row[11]
    reason = row[8]
    return {
        "scorer_id": row[1],
        "scorer_label": row[2],
        "call_id": row[3],
        "status": row[4],
        "score": row[5],
        "values": {} if row[6] is None else value(row[6]) or {},
        "corpus": None if row[7] is None else value(row[7]),
        "reason": None if reason is None else _plain(reason),
        "steps": {} if row[9] is None else value(row[9]) or {},
        "prompts": {} if row[10] is None else value(row[10]) or {},
        "judge_calls": calls.get(row[14], []),
        "error": None if error is None else _score_error(value(error)),
        "not_scorable_step": row[12],
        "duration_ms": row[13],
    }


def _target_error(cell: dict[str, Any]) -> dict[str, Any]:
    return {
        "message": cell["message"],
        "kind": cell.get("kind", "Exception"),
        "traceback": cell.get("traceback"),
    }


def _score_error(cell: dict[str, Any]) -> dict[str, Any]:
    return {
        "message": cell["message"],
        "failed_step": cell.get("failed_step"),
        "completed_steps": list(cell.get("completed_steps") or []),
        "kind": cell.get("kind", "ScorerRunError"),
    }


def _usage(
    input_tokens: int,
    output_tokens: int,
    total_tokens: int,
    reasoning_tokens: int | None,
    cached_input_tokens: int | None,
) -> dict[str, Any]:
    """``Usage``'s fields, with its validator's total (input + output when none stored)."""
    if total_tokens == 0 and (input_tokens or output_tokens):
        total_tokens = input_tokens + output_tokens
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": total_tokens,
        "reasoning_tokens": reasoning_tokens,
        "cached_input_tokens": cached_input_tokens,
    }


def _warnings_fields(cell: Any, started_at: float, completed_at: float) -> dict[str, Any]:
    """``warnings`` to ``samples`` of a result from its ``warnings`` cell (either shape:
    ``results_codec._from_warnings_cell``), in ``ItemResult``'s field order."""
    if not isinstance(cell, dict):
        return {
            "warnings": cell or [],
            "started_at": started_at,
            "completed_at": completed_at,
            "usage": None,
            "cost_usd": None,
            "samples": None,
        }
    usage = cell.get("usage")
    return {
        "warnings": cell.get("warnings") or [],
        "started_at": started_at,
        "completed_at": completed_at,
        "usage": None
        if usage is None
        else _usage(
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
            int(usage.get("total_tokens", 0)),
            usage.get("reasoning_tokens"),
            usage.get("cached_input_tokens"),
        ),
        "cost_usd": cell.get("cost_usd"),
        "samples": cell.get("samples"),
    }


def _call_dict(row: Row[Any]) -> dict[str, Any]:
    return {
        "step": row.step,
        "status": row.status,
        "prompt": row.prompt,
        "model_id": row.model_id,
        "provider": row.provider,
        "attempts": row.attempts,
        "duration_ms": row.duration_ms,
        "output": row.output,
        "raw_output": row.raw_output,
        "usage": _usage(
            row.input_tokens,
            row.output_tokens,
            row.total_tokens,
            row.reasoning_tokens,
            row.cached_input_tokens,
        ),
        "error": row.error,
        "cached": row.cached,
        "cost_usd": row.cost_usd,
    }
