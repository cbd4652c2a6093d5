"""A stored run's rows as the source of its summary (``assay.summary.source.SummarySource``).

Why: a stored run keeps nothing per item in memory while it runs; at the end its summary
streams the committed rows back, one scorer at a time, in (position, repeat) order and in
chunks of ``CHUNK`` rows (keyset pages over the ``ix_item_results_order`` index), and the
latency mean and percentiles come from one pass over the latencies in ascending order
(SQLite's sorter holds a bounded amount and spills the rest to a temporary file; an index on
the latencies would spare the sort but cost the writer ~11 % per result, measured). The
statistics are those of an in-memory run over the same results, bit for bit
(``assay.summary.stats``), and they are computed from what the store holds: a summary can
never describe results the database does not have.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy import Row

from assay.store.codec import chunked
from assay.store.db import Database
from assay.store.results_codec import target_usage_of
from assay.store.tables import item_results, judge_calls, scores
from assay.summary.columns import ERROR, READY, STATUS_CODES, ScoreColumns
from assay.summary.exact import ExactSum, linear_percentile
from assay.summary.source import CorpusRow, LatencyStats, ResultCounts
from assay.types import Usage

_ORDER = (item_results.c.position, item_results.c.repeat, item_results.c.item_id)
_LARGEST = sys.float_info.max


class StoredSummarySource:
    """The numbers of run ``run_id``'s summary, read from the store on demand."""

    CHUNK = 4096
    """Rows per page: bounds what a summary holds at once (about 30 bytes a row as numpy
    arrays, ~350 as SQLAlchemy rows while a page is converted: ~1.4 MB)."""

    def __init__(
        self,
        db: Database,
        run_id: str,
        corpus_rows: Callable[[str, str], Iterator[CorpusRow]],
    ) -> None:
        self._db = db
        self._run_id = run_id
        self._corpus_rows = corpus_rows

    # ------------------------------------------------------------------ SummarySource
    def scorer_ids(self) -> list[str]:
        """Every scorer with a stored result in the run, by id."""
        query = (
            sa.select(scores.c.scorer_id)
            .distinct()
            .select_from(item_results.join(scores, scores.c.result_id == item_results.c.id))
            .where(item_results.c.run_id == self._run_id)
            .order_by(scores.c.scorer_id)
        )
        with self._db.read() as conn:
            return [str(x) for x in conn.execute(query).scalars()]

    def score_chunks(self, scorer_id: str) -> Iterator[ScoreColumns]:
        """The scorer's results as columns, with the rule of ``ScoreColumnsBuilder.add``: a
        ready status without a finite number is an error, a non-ready one holds NaN."""
        codes = sa.case(STATUS_CODES, value=scores.c.status, else_=-1)
        for rows in self._pages(scorer_id, (codes, scores.c.score)):
            position, repeat, code, score = zip(*rows, strict=True)
            del rows  # before the next page is read
            status = np.array(code, dtype=np.int8)
            if bool((status < 0).any()):
                raise ValueError(f"run {self._run_id}: a score of {scorer_id!r} has no status")
            value = np.array(score, dtype=np.float64)  # NULL reads as NaN
            ready = status == READY
            broken = ready & ~np.isfinite(value)
            if broken.any():
                status[broken] = ERROR
            value[~ready | broken] = math.nan
            yield ScoreColumns(
                position=np.array(position, dtype=np.int64),
                repeat=np.array(repeat, dtype=np.int32),
                value=value,
                status=status,
            )

    def value_keys(self, scorer_id: str) -> list[str]:
        keys: dict[str, None] = {}
        for rows in self._value_pages(scorer_id):
            for row in rows:
                keys.update(dict.fromkeys(row.values_))
        return list(keys)

    def value_chunks(self, scorer_id: str, key: str) -> Iterator[ScoreColumns]:
        """The rows that reported ``key`` with a finite number (``add_values``' rule)."""
        for rows in self._value_pages(scorer_id):
            kept = [
                (row.position, row.repeat, float(number))
                for row in rows
                if isinstance(number := row.values_.get(key), int | float) and math.isfinite(number)
            ]
            del rows  # before the next page is read
            if not kept:
                continue
            size = len(kept)
            yield ScoreColumns(
                position=np.fromiter((k[0] for k in kept), dtype=np.int64, count=size),
                repeat=np.fromiter((k[1] for k in kept), dtype=np.int32, count=size),
                value=np.fromiter((k[2] for k in kept), dtype=np.float64, count=size),
                status=np.zeros(size, dtype=np.int8),
            )

    def corpus_rows(self, scorer_id: str) -> Sequence[CorpusRow]:
        return list(self._corpus_rows(self._run_id, scorer_id))

    def latency_stats(self) -> LatencyStats:
        """Mean (exact sum), p50 and p95, from one pass over the latencies in ascending
        order (the database sorts them; the ranks the percentiles need are known from a
        count first, in the same read transaction, so both see the same rows)."""
        t = item_results.c
        finite = sa.and_(t.run_id == self._run_id, t.latency_ms.between(-_LARGEST, _LARGEST))
        total = ExactSum()
        found: dict[int, float] = {}
        with self._db.read() as conn:
            n = int(conn.execute(sa.select(sa.func.count(t.latency_ms)).where(finite)).scalar_one())
            if n == 0:
                return None, None, None
            wanted = sorted(_ranks(n, 50.0) | _ranks(n, 95.0))
            result = conn.execution_options(stream_results=True, yield_per=self.CHUNK).execute(
                sa.select(t.latency_ms).where(finite).order_by(t.latency_ms)
            )
            start = 0
            for page in result.scalars().partitions():
                values = np.array(page, dtype=np.float64)
                total.add(values)
                stop = start + int(values.shape[0])
                found.update((r, float(values[r - start])) for r in wanted if start <= r < stop)
                start = stop
        if total.count != n:  # the count and the pass read one snapshot: never expected
            raise RuntimeError(f"run {self._run_id}: {total.count} latencies read, {n} counted")
        kth = found.__getitem__
        return total.mean(), linear_percentile(n, 50.0, kth), linear_percentile(n, 95.0, kth)

    # ------------------------------------------------------------------ beyond the protocol
    def counts(self) -> ResultCounts:
        """The run's counts by aggregate queries, in one read transaction: results, items,
        item errors; judge calls and their usage and cost; the target's usage and cost
        (from the ``warnings`` cells that carry any). What a dispatched run's summary needs
        besides the columns above; building every result instead cost ~400 µs a result
        here (a 100,000-item Ray run would spend a minute reading itself back)."""
        t, c = item_results.c, judge_calls.c
        run = t.run_id == self._run_id
        calls = (
            sa.select(
                sa.func.count(),
                sa.func.coalesce(sa.func.sum(c.input_tokens), 0),
                sa.func.coalesce(sa.func.sum(c.output_tokens), 0),
                sa.func.coalesce(sa.func.sum(c.total_tokens), 0),
                sa.func.sum(c.reasoning_tokens),
                sa.func.sum(c.cached_input_tokens),
                sa.func.sum(c.cost_usd),
            )
            .select_from(
                item_results.join(scores, scores.c.result_id == t.id).join(
                    judge_calls, c.score_id == scores.c.id
                )
            )
            .where(run)
        )
        target_usage, target_cost = Usage(), None
        with self._db.read() as conn:
            results, items, errors = conn.execute(
                sa.select(
                    sa.func.count(), sa.func.count(sa.distinct(t.position)), sa.func.count(t.error)
                ).where(run)
            ).one()
            n_calls, tokens_in, tokens_out, tokens, reasoning, cached, cost = conn.execute(
                calls
            ).one()
            cells = conn.execution_options(stream_results=True, yield_per=self.CHUNK).execute(
                sa.select(t.warnings).where(run, t.warnings.is_not(None))
            )
            for cell in cells.scalars():
                usage, spent = target_usage_of(cell)
                if usage is not None:
                    target_usage = target_usage + usage
                if spent is not None:
                    target_cost = (target_cost or 0.0) + spent
        return ResultCounts(
            items=int(items),
            results=int(results),
            item_errors=int(errors),
            judge_calls=int(n_calls),
            usage=Usage(
                input_tokens=int(tokens_in),
                output_tokens=int(tokens_out),
                total_tokens=int(tokens),
                reasoning_tokens=None if reasoning is None else int(reasoning),
                cached_input_tokens=None if cached is None else int(cached),
            ),
            cost_usd=None if cost is None else float(cost),
            target_usage=target_usage,
            target_cost_usd=target_cost,
        )

    def item_ids(self, positions: Sequence[int]) -> list[str]:
        t = item_results.c
        found: dict[int, str] = {}
        with self._db.read() as conn:
            for part in chunked(sorted(set(positions)), 500):
                query = (
                    sa.select(t.position, t.item_id)
                    .distinct()
                    .where(t.run_id == self._run_id, t.position.in_(part))
                )
                found.update((int(r.position), str(r.item_id)) for r in conn.execute(query))
        return [found[p] for p in positions]

    # ------------------------------------------------------------------ pages
    def _pages(
        self, scorer_id: str, columns: Sequence[Any], *extra: Any
    ) -> Iterator[Sequence[Row[Any]]]:
        """The scorer's rows (position, repeat, then ``columns``) in pages of ``CHUNK``,
        from one query streamed in (position, repeat) order."""
        t = item_results.c
        query = (
            sa.select(t.position, t.repeat, *columns)
            .select_from(item_results.join(scores, scores.c.result_id == t.id))
            .where(t.run_id == self._run_id, scores.c.scorer_id == scorer_id, *extra)
            .order_by(*_ORDER)
        )
        with self._db.read() as conn:
            result = conn.execution_options(stream_results=True, yield_per=self.CHUNK).execute(
                query
            )
            for page in result.partitions():
                yield page
                del page  # one page of rows at a time: gone before the next is read

    def _value_pages(self, scorer_id: str) -> Iterator[Sequence[Row[Any]]]:
        """Pages of the scorer's rows that stored named values (a JSON object each)."""
        for rows in self._pages(scorer_id, (scores.c.values_,), scores.c.values_.is_not(None)):
            kept = [row for row in rows if isinstance(row.values_, dict) and row.values_]
            if kept:
                yield kept


def _ranks(n: int, q: float) -> set[int]:
    """The order statistics (0-based ranks) ``linear_percentile(n, q, …)`` reads."""
    ranks: set[int] = set()

    def record(i: int) -> float:
        ranks.add(i)
        return 0.0

    linear_percentile(n, q, record)  # which ranks it reads depends on n and q only
    return ranks
