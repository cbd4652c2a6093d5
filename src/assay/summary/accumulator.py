"""Summarise a run while it streams, without keeping its results.

The runner hands every finished ``ItemResult`` to ``SummaryAccumulator.add`` and asks for
the ``RunSummary`` at the end. Only numbers are kept, in flat buffers, so a persisted
100k-item run does not grow the runner's memory with the results it already wrote to the
store: per result its latency (8 bytes) and per score 21 bytes (position, repeat, value,
status), plus either the item's id (``keep_ids=True``, the default: about 16 bytes plus the
id's length) or one byte per item position (``keep_ids=False``: the runner, which can find
an id again from its items when the summary needs one, see ``summary(item_id_for=...)``).
Named values get their own columns (one per scorer and value key); corpus payloads are kept
only for scorers of the ``specs`` given to the constructor that declare a corpus
aggregation.

With ``keep_columns=False`` (a stored run: its sink streams the numbers back from the store
at the end, ``summary(source=...)``) no scores, latencies or corpus payloads are kept at all:
only counters, usage, and one byte per item position.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from assay.summary.columns import ScoreColumnsBuilder
from assay.types import ItemResult, JudgeCall, RunSummary, ScorerSpec, Usage

if TYPE_CHECKING:
    from assay.summary.source import CorpusRow, SummarySource

# numpy and the statistics (``summary.source``, ``summary.stats``, ``summary.aggregations``)
# are imported when a summary is made, not when a run starts: a run only appends to flat
# buffers, and a short run's start-up is then spared about 0.1-0.3 s of imports (the
# runner imports them in a background thread in the run's tail: assay/warm_imports.py)


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
        import numpy as np

        return int(np.unique(np.frombuffer(self._positions, dtype=np.int64)).shape[0])

    def lookup(self) -> Callable[[int], str]:
        """A position -> id function over a snapshot; unknown positions raise ``KeyError``."""
        import numpy as np

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


def _lazy(ids: ItemIdTable) -> Callable[[int], str]:
    """``ids.lookup()`` built at the first call: the sorted snapshot costs ~40 bytes per
    result and is only needed when some item flipped."""
    lookup: Callable[[int], str] | None = None

    def item_id_for(position: int) -> str:
        nonlocal lookup
        if lookup is None:
            lookup = ids.lookup()
        return lookup(position)

    return item_id_for


def _corpus_scorer_ids(specs: Sequence[ScorerSpec]) -> set[str]:
    """Ids of the scorers declaring a corpus aggregation (the aggregations' registry, and
    numpy with it, is imported only when some scorer names an aggregation)."""
    if not any(s.aggregations for s in specs):
        return set()
    from assay.summary.aggregations import has_corpus_aggregation

    return {s.id for s in specs if has_corpus_aggregation(s.aggregations)}


class SummaryAccumulator:
    """Feeds ``ItemResult``s into score columns and counters; ``summary()`` at the end."""

    def __init__(
        self,
        specs: Sequence[ScorerSpec] = (),
        *,
        keep_ids: bool = True,
        keep_columns: bool = True,
    ) -> None:
        self.builder = ScoreColumnsBuilder()
        self.keep_columns = keep_columns
        """False when the summary's numbers will come from another ``SummarySource``."""
        self._reported: dict[str, dict[str, None]] = {}
        """Without columns: scorer id -> value keys seen, in first-seen order."""
        self._corpus_ids = _corpus_scorer_ids(specs)
        """Scorers whose corpus payloads are kept (only those declaring a corpus aggregation:
        everything else stays memory-flat, the payloads are in the store)."""
        self.corpus: dict[str, list[CorpusRow]] = {}
        self.ids: ItemIdTable | None = ItemIdTable() if keep_ids else None
        """Position -> item id (``keep_ids``); ``None`` when the caller finds ids itself."""
        self._seen = bytearray()
        """Without ids: one byte per item position, 1 once a result of it was added."""
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
        position, repeat = result.position, result.repeat
        if repeat > self._max_repeat:
            self._max_repeat = repeat
        if self.ids is not None:
            self.ids.add(position, result.item_id)
        else:
            seen = self._seen
            if position >= len(seen):
                seen.extend(bytes(position + 1 - len(seen)))
            seen[position] = 1
        if result.error is not None:
            self.item_errors += 1
        if result.usage is not None:
            self.target_usage = self.target_usage + result.usage
        if result.cost_usd is not None:
            self.target_cost_usd = (self.target_cost_usd or 0.0) + result.cost_usd
        if not self.keep_columns:
            reported = self._reported
            for scorer_id, score in result.scores.items():
                keys = reported.get(scorer_id)
                if keys is None:
                    keys = reported[scorer_id] = {}
                if score.values:  # the keys ``add_values`` would make a column of
                    for key, number in score.values.items():
                        if key not in keys and number is not None and math.isfinite(number):
                            keys[key] = None
                self._count_calls(score.judge_calls)
            return
        latency = result.latency_ms
        if latency is not None and math.isfinite(latency):
            self._latencies.append(latency)
        builder = self.builder
        for scorer_id, score in result.scores.items():
            value = score.score
            if type(value) is float and score.status == "ready" and math.isfinite(value):
                builder.add_ready(scorer_id, position, repeat, value)
            else:
                builder.add(scorer_id, position, repeat, score.status, value)
            if score.values:
                builder.add_values(scorer_id, position, repeat, score.values)
            if score.corpus is not None and scorer_id in self._corpus_ids:
                rows = self.corpus.setdefault(scorer_id, [])
                rows.append((position, repeat, score.corpus))
            self._count_calls(score.judge_calls)

    def _count_calls(self, calls: Sequence[JudgeCall]) -> None:
        for call in calls:
            self.judge_calls += 1
            self.usage = self.usage + call.usage
            if call.cost_usd is not None:
                self.cost_usd = (self.cost_usd or 0.0) + call.cost_usd

    @property
    def items(self) -> int:
        """Distinct items seen (results / repeats when every repeat completed)."""
        if self.ids is not None:
            return self.ids.distinct_positions()
        return self._seen.count(1)

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
        source: SummarySource | None = None,
    ) -> RunSummary:
        """The run summary so far. Scores and latencies come from ``source`` when given
        (required with ``keep_columns=False``), else from what ``add`` kept. ``item_id_for``
        (called only for flipped items) defaults to the ids recorded by ``add`` and is
        required with ``keep_ids=False`` (unless ``source`` names items itself);
        ``repeats`` defaults to the highest repeat seen + 1 (pass the configured value for
        an interrupted run)."""
        import numpy as np

        from assay.summary.source import MemorySource, ReportedSource
        from assay.summary.stats import summarize_source

        if source is None:
            if not self.keep_columns:
                raise ValueError("an accumulator without columns needs a summary source")
            if item_id_for is None:
                if self.ids is None:
                    raise ValueError("an accumulator without ids needs item_id_for")
                item_id_for = _lazy(self.ids)
            source = MemorySource(
                self.builder,
                np.frombuffer(self._latencies, dtype=np.float64).copy(),
                item_id_for=item_id_for,
                corpus=self.corpus,
            )
        elif not self.keep_columns:
            source = ReportedSource(source, self._reported)
        return summarize_source(
            specs,
            source,
            threshold=threshold,
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
            n_boot=n_boot,
            seed=seed,
        )
