"""Where a run summary's per-item numbers come from.

A ``SummarySource`` streams each scorer's results (and each named value's) in (position,
repeat) order, gives the latency statistics, the corpus payloads of scorers that declare a
corpus aggregation, and the ids of the few items a summary names (flipped items). Two
implement it: ``MemorySource`` over the accumulator's columns (``run_evals``), and the
store's ``StoredSummarySource`` over a run's rows (stored runs: nothing per item is held while
the run goes, and the summary streams back what was committed). Both feed the same
statistics (``assay.summary.stats.summarize_source``), so they give the same summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from assay.summary.columns import ScoreColumns, ScoreColumnsBuilder
from assay.summary.exact import exact_mean, linear_percentile
from assay.summary.streaming import sorted_columns
from assay.types import Usage

CorpusRow = tuple[int, int, Any]
"""(position, repeat, corpus payload) of one ready result."""

LatencyStats = tuple[float | None, float | None, float | None]
"""Mean, p50 and p95 of the item latencies in ms (``None`` without latencies)."""


@dataclass(frozen=True)
class ResultCounts:
    """A run's counts that are not per-scorer columns: what ``SummaryAccumulator`` counts
    as results go by, for a run whose results never passed through this process (the Ray
    backend's workers stored them), read from the stored rows instead."""

    items: int
    results: int
    item_errors: int
    judge_calls: int
    usage: Usage
    cost_usd: float | None
    target_usage: Usage
    target_cost_usd: float | None


class SummarySource(Protocol):
    """The numbers one run summary is computed from (see the module docstring)."""

    def scorer_ids(self) -> list[str]:
        """Scorers that reported at least one result."""

    def score_chunks(self, scorer_id: str) -> Iterator[ScoreColumns]:
        """The scorer's results in (position, repeat) order, in chunks (callable again)."""

    def value_keys(self, scorer_id: str) -> list[str]:
        """The named values the scorer reported, in first-seen order."""

    def value_chunks(self, scorer_id: str, key: str) -> Iterator[ScoreColumns]:
        """One named value's numbers (all ``ready``) in (position, repeat) order."""

    def corpus_rows(self, scorer_id: str) -> Sequence[CorpusRow]:
        """The scorer's corpus payloads (asked only for scorers declaring a corpus
        aggregation)."""

    def latency_stats(self) -> LatencyStats:
        """Mean, p50 and p95 of the finite latencies."""

    def item_ids(self, positions: Sequence[int]) -> list[str]:
        """The ids of the items at ``positions``, in the same order."""


class MemorySource:
    """A ``SummarySource`` over in-memory columns (the accumulator's, or any builder's)."""

    def __init__(
        self,
        builder: ScoreColumnsBuilder,
        latencies_ms: Sequence[float] | npt.NDArray[np.float64] = (),
        *,
        item_id_for: Callable[[int], str],
        corpus: Mapping[str, Sequence[CorpusRow]] | None = None,
    ) -> None:
        self.builder = builder
        self.latencies_ms = latencies_ms
        self.item_id_for = item_id_for
        self.corpus = corpus or {}

    def scorer_ids(self) -> list[str]:
        return self.builder.scorer_ids()

    def score_chunks(self, scorer_id: str) -> Iterator[ScoreColumns]:
        yield from chunked(sorted_columns(self.builder.columns(scorer_id)))

    def value_keys(self, scorer_id: str) -> list[str]:
        return self.builder.value_keys(scorer_id)

    def value_chunks(self, scorer_id: str, key: str) -> Iterator[ScoreColumns]:
        yield from chunked(sorted_columns(self.builder.value_columns(scorer_id, key)))

    def corpus_rows(self, scorer_id: str) -> Sequence[CorpusRow]:
        return self.corpus.get(scorer_id, ())

    def latency_stats(self) -> LatencyStats:
        return latency_stats(self.latencies_ms)

    def item_ids(self, positions: Sequence[int]) -> list[str]:
        return [self.item_id_for(p) for p in positions]


class ReportedSource:
    """``source``'s numbers under the scorer ids and value keys a run saw as its results
    went by (first-seen order, as the in-memory columns list them): the accumulator knows
    them at no cost, where asking the store would scan every row once more."""

    def __init__(self, source: SummarySource, reported: Mapping[str, Mapping[str, None]]) -> None:
        self.source = source
        self.reported = reported

    def scorer_ids(self) -> list[str]:
        return list(self.reported)

    def score_chunks(self, scorer_id: str) -> Iterator[ScoreColumns]:
        return self.source.score_chunks(scorer_id)

    def value_keys(self, scorer_id: str) -> list[str]:
        return list(self.reported.get(scorer_id, {}))

    def value_chunks(self, scorer_id: str, key: str) -> Iterator[ScoreColumns]:
        return self.source.value_chunks(scorer_id, key)

    def corpus_rows(self, scorer_id: str) -> Sequence[CorpusRow]:
        return self.source.corpus_rows(scorer_id)

    def latency_stats(self) -> LatencyStats:
        return self.source.latency_stats()

    def item_ids(self, positions: Sequence[int]) -> list[str]:
        return self.source.item_ids(positions)


class _NoScores:
    """A ``SummarySource`` with no scores and no latencies."""

    def scorer_ids(self) -> list[str]:
        return []

    def score_chunks(self, scorer_id: str) -> Iterator[ScoreColumns]:
        return iter(())

    def value_keys(self, scorer_id: str) -> list[str]:
        return []

    def value_chunks(self, scorer_id: str, key: str) -> Iterator[ScoreColumns]:
        return iter(())

    def corpus_rows(self, scorer_id: str) -> Sequence[CorpusRow]:
        return ()

    def latency_stats(self) -> LatencyStats:
        return None, None, None

    def item_ids(self, positions: Sequence[int]) -> list[str]:
        raise KeyError(positions[0] if positions else None)


NO_SCORES: SummarySource = _NoScores()
"""The summary of a run whose numbers could not be read: counts only (see the engine)."""


CHUNK_ROWS = 1 << 14
"""Rows per chunk handed to the statistics: bounds their working arrays."""


def chunked(cols: ScoreColumns, rows: int = CHUNK_ROWS) -> Iterator[ScoreColumns]:
    """``cols`` as consecutive slices (views) of at most ``rows`` rows."""
    for start in range(0, len(cols), rows):
        yield ScoreColumns(
            position=cols.position[start : start + rows],
            repeat=cols.repeat[start : start + rows],
            value=cols.value[start : start + rows],
            status=cols.status[start : start + rows],
        )


def latency_stats(latencies_ms: Sequence[float] | npt.NDArray[np.float64]) -> LatencyStats:
    """Mean (exact sum, rounded once), p50 and p95 (numpy's linear method) of the finite
    latencies; NaN and infinities are left out (a stored-output run has none)."""
    ordered = np.array(latencies_ms, dtype=np.float64)  # a copy: sorted in place below
    finite = np.isfinite(ordered)
    if not finite.all():
        ordered = ordered[finite]
    del finite
    n = int(ordered.shape[0])
    if n == 0:
        return None, None, None
    ordered.sort()
    mean = exact_mean(ordered)

    def kth(i: int) -> float:
        return float(ordered[i])

    return mean, linear_percentile(n, 50.0, kth), linear_percentile(n, 95.0, kth)
