"""Summarise a run while it streams, without keeping its results.

The runner hands every finished ``ItemResult`` to ``SummaryAccumulator.add`` and asks for
the ``RunSummary`` at the end. Only numbers and item ids are kept, in flat buffers (about
30 bytes plus the id's length per result), so a persisted 100k-item run does not grow the
runner's memory with the results it already wrote to the store. Named values get their own
columns (one per scorer and value key); corpus payloads are kept only for scorers of the
``specs`` given to the constructor that declare a corpus aggregation.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence

import numpy as np

from assay.summary.aggregations import has_corpus_aggregation
from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.stats import CorpusRow, summarize_run
from assay.types import ItemResult, RunSummary, ScorerSpec, Usage


class ItemIdTable:
    """Position -> item id, stored as one UTF-8 blob plus offsets instead of a dict of str.

    A result is recorded per repeat (no de-duplication: that would need a set of positions,
    which costs more than the duplicates). Lookups go through a sorted snapshot.
    """

    def __init__(self) -> None:
        self._positions = array("q")
        self._ends = array("q")
        self._blob = bytearray()

    def add(self, position: int, item_id: str) -> None:
        self._blob += item_id.encode("utf-8")
        self._positions.append(position)
        self._ends.append(len(self._blob))

    def distinct_positions(self) -> int:
        """How many distinct items were recorded."""
        return int(np.unique(np.frombuffer(self._positions, dtype=np.int64)).shape[0])

    def lookup(self) -> Callable[[int], str]:
        """A position -> id function over a snapshot; unknown positions raise ``KeyError``."""
        positions = np.frombuffer(self._positions, dtype=np.int64).copy()
        ends = np.frombuffer(self._ends, dtype=np.int64).copy()
        order = np.argsort(positions, kind="stable")
        ordered = positions[order]
        blob = bytes(self._blob)

        def item_id_for(position: int) -> str:
            i = int(np.searchsorted(ordered, position))
            if i >= ordered.shape[0] or int(ordered[i]) != position:
                raise KeyError(position)
            k = int(order[i])
            start = int(ends[k - 1]) if k else 0
            return blob[start : int(ends[k])].decode("utf-8")

        return item_id_for


class SummaryAccumulator:
    """Feeds ``ItemResult``s into score columns and counters; ``summary()`` at the end."""

    def __init__(self, specs: Sequence[ScorerSpec] = ()) -> None:
        self.builder = ScoreColumnsBuilder()
        self._corpus_ids = {s.id for s in specs if has_corpus_aggregation(s.aggregations)}
        """Scorers whose corpus payloads are kept (only those declaring a corpus aggregation:
        everything else stays memory-flat, the payloads are in the store)."""
        self.corpus: dict[str, list[CorpusRow]] = {}
        self.ids = ItemIdTable()
        self._latencies = array("d")
        self.results = 0
        self.item_errors = 0
        self.judge_calls = 0
        self.usage = Usage()
        self.cost_usd: float | None = None
        self.target_usage = Usage()
        self.target_cost_usd: float | None = None
        self._max_repeat = -1

    def add(self, result: ItemResult) -> None:
        """Record one finished item result (scores, latency, target error, target and judge
        usage)."""
        self.results += 1
        self._max_repeat = max(self._max_repeat, result.repeat)
        self.ids.add(result.position, result.item_id)
        if result.error is not None:
            self.item_errors += 1
        if result.latency_ms is not None and math.isfinite(result.latency_ms):
            self._latencies.append(result.latency_ms)
        if result.usage is not None:
            self.target_usage = self.target_usage + result.usage
        if result.cost_usd is not None:
            self.target_cost_usd = (self.target_cost_usd or 0.0) + result.cost_usd
        for scorer_id, score in result.scores.items():
            self.builder.add(scorer_id, result.position, result.repeat, score.status, score.score)
            if score.values:
                self.builder.add_values(scorer_id, result.position, result.repeat, score.values)
            if score.corpus is not None and scorer_id in self._corpus_ids:
                rows = self.corpus.setdefault(scorer_id, [])
                rows.append((result.position, result.repeat, score.corpus))
            for call in score.judge_calls:
                self.judge_calls += 1
                self.usage = self.usage + call.usage
                if call.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + call.cost_usd

    @property
    def items(self) -> int:
        """Distinct items seen (results / repeats when every repeat completed)."""
        return self.ids.distinct_positions()

    def summary(
        self,
        specs: Sequence[ScorerSpec],
        *,
        threshold: float | None,
        duration_s: float | None,
        item_id_for: Callable[[int], str] | None = None,
        repeats: int | None = None,
        n_boot: int = 2000,
        seed: int = 0,
    ) -> RunSummary:
        """The run summary so far. ``item_id_for`` defaults to the ids recorded by ``add``;
        ``repeats`` defaults to the highest repeat seen + 1 (pass the configured value for
        an interrupted run)."""
        return summarize_run(
            specs,
            self.builder,
            threshold=threshold,
            latencies_ms=np.frombuffer(self._latencies, dtype=np.float64).copy(),
            items=self.items,
            results=self.results,
            item_errors=self.item_errors,
            repeats=repeats if repeats is not None else max(1, self._max_repeat + 1),
            duration_s=duration_s,
            judge_calls=self.judge_calls,
            usage=self.usage,
            cost_usd=self.cost_usd,
            target_usage=self.target_usage,
            target_cost_usd=self.target_cost_usd,
            item_id_for=item_id_for or self.ids.lookup(),
            n_boot=n_boot,
            seed=seed,
            corpus=self.corpus,
        )
