"""Run statistics: per-item means over repeats, bootstrap CIs, pass rates, flips.

Every statistic is computed on per-item means, so an item run three times counts once and a
scorer's error on one repeat does not drop the item (its other repeats still count). Errors
and not-scorable results are counted, never averaged: the columns hold NaN for them.

A summary is computed from a ``SummarySource`` (``assay.summary.source``) that streams each
scorer's results in (position, repeat) order: in-memory columns or a stored run's rows, with
the same numbers either way. Means and standard errors use exact sums rounded once
(``assay.summary.exact``), so they do not depend on how the numbers were chunked or ordered;
the bootstrap CI is described in ``assay.summary.bootstrap``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NotRequired, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from assay.summary.aggregations import (
    MEAN,
    Aggregation,
    UnknownAggregationError,
    get_aggregation,
    run_aggregation,
)
from assay.summary.bootstrap import (
    BOOTSTRAP_MAX_CELLS,
    MULTINOMIAL_RATIO,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
)
from assay.summary.columns import ScoreColumns, ScoreColumnsBuilder
from assay.summary.exact import exact_mean, sample_stderr
from assay.summary.source import CorpusRow, MemorySource, SummarySource, latency_stats
from assay.summary.streaming import (
    Chunks,
    group_items,
    item_counts,
    item_means,
    scorer_numbers,
    sorted_columns,
)
from assay.types import (
    RunSummary,
    ScorerSpec,
    ScorerSummary,
    Usage,
    ValueSummary,
    range_is_bounded,
    threshold_on_scale,
)

__all__ = [
    "BOOTSTRAP_MAX_CELLS",
    "MULTINOMIAL_RATIO",
    "CorpusRow",
    "ItemStats",
    "bootstrap_mean_ci",
    "bootstrap_mean_cis",
    "corpus_value",
    "effective_threshold",
    "item_stats",
    "latency_stats",
    "passing",
    "scorer_aggregates",
    "stderr_of_mean",
    "summarize_from_chunks",
    "summarize_run",
    "summarize_scorer",
    "summarize_source",
    "summarize_value",
    "weighted_score",
]

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class ItemStats:
    """Per-item aggregates over the ready repeats, for items with at least one number.

    Arrays are aligned and sorted by ``position``. ``passes`` counts repeats on the good
    side of the threshold (all zero without one).
    """

    position: IntArray
    mean: FloatArray
    n: IntArray
    spread: FloatArray
    passes: IntArray

    def __len__(self) -> int:
        return int(self.position.shape[0])


def passing(
    values: FloatArray, threshold: float, *, higher_is_better: bool
) -> npt.NDArray[np.bool_]:
    """Verdicts at ``threshold``: ``>=`` when higher is better, ``<=`` otherwise (the
    threshold itself passes either way, so a perfect score at the boundary is a pass)."""
    return values >= threshold if higher_is_better else values <= threshold


def item_stats(
    cols: ScoreColumns, *, threshold: float | None = None, higher_is_better: bool = True
) -> ItemStats:
    """Group the ready scores by position: mean, ready-repeat count, max-min, passes (the
    streamed summary's grouping, ``assay.summary.streaming.group_items``, over the whole
    columns in (position, repeat) order). With one number per position ``n``, ``spread``
    (and ``passes`` without a threshold) are read-only constant views."""
    groups = group_items(
        sorted_columns(cols), threshold=threshold, higher_is_better=higher_is_better
    )
    k = int(groups.mean.shape[0])
    return ItemStats(
        position=groups.position.astype(np.int64, copy=False),
        mean=groups.mean,
        n=groups.n if groups.n is not None else np.broadcast_to(np.int64(1), (k,)),
        spread=groups.spread if groups.spread is not None else np.broadcast_to(0.0, (k,)),
        passes=(groups.passes if groups.passes is not None else np.broadcast_to(np.int64(0), (k,))),
    )


def stderr_of_mean(values: FloatArray) -> float | None:
    """Sample standard deviation (ddof=1) over sqrt(n), with exact sums (see
    ``assay.summary.exact``); ``None`` below two values."""
    mean = exact_mean(values)
    return None if mean is None else sample_stderr(values, mean)


def summarize_scorer(
    spec: ScorerSpec,
    cols: ScoreColumns,
    *,
    threshold: float | None,
    item_id_for: Callable[[int], str],
    n_boot: int = 2000,
    seed: int = 0,
    value_columns: Mapping[str, ScoreColumns] | None = None,
    corpus: Sequence[CorpusRow] | None = None,
) -> ScorerSummary:
    """One scorer's summary from its columns (in any order); see ``summarize_from_chunks``.
    ``item_id_for`` maps a position to its item id; it is only called for flipped items."""
    values = value_columns or {}
    return summarize_from_chunks(
        spec,
        lambda: (sorted_columns(cols),),
        threshold=threshold,
        item_ids=lambda positions: [item_id_for(p) for p in positions],
        n_boot=n_boot,
        seed=seed,
        value_chunks={key: _fixed(sorted_columns(vcols)) for key, vcols in values.items()},
        corpus=lambda: corpus or (),
    )


def summarize_from_chunks(
    spec: ScorerSpec,
    chunks: Chunks,
    *,
    threshold: float | None,
    item_ids: Callable[[list[int]], list[str]],
    n_boot: int = 2000,
    seed: int = 0,
    value_chunks: Mapping[str, Chunks] | None = None,
    corpus: Callable[[], Sequence[CorpusRow]] | None = None,
) -> ScorerSummary:
    """One scorer's summary over per-item means (see the module docstring), from its results
    streamed in (position, repeat) order by ``chunks``.

    ``threshold`` is on the scorer's own scale (``effective_threshold`` resolves the run's).
    ``item_ids`` gives the ids of flipped items only, so callers need not materialise every
    id. ``mean_spread`` covers items with at least two ready repeats (an item with one
    number has no spread to measure). ``value_chunks`` (value key -> its chunks) are
    summarised into ``values``; ``corpus`` gives the (position, repeat, payload) rows a
    corpus aggregation needs (called only when one is declared).
    """
    numbers = scorer_numbers(
        chunks,
        threshold=threshold,
        higher_is_better=spec.higher_is_better,
        keep_means=_needs_item_means(spec),
        n_boot=n_boot,
        seed=seed,
    )
    count, mean = numbers.count, numbers.mean
    pass_rate = numbers.passing / count if threshold is not None and count else None
    flipped = item_ids(numbers.flipped_positions) if numbers.flipped_positions else []
    return ScorerSummary(
        scorer_id=spec.id,
        scorer_label=spec.label,
        higher_is_better=spec.higher_is_better,
        score_range=spec.score_range,
        count=count,
        mean=mean,
        stderr=numbers.stderr,
        ci_low=numbers.ci[0] if numbers.ci else None,
        ci_high=numbers.ci[1] if numbers.ci else None,
        min=numbers.min,
        max=numbers.max,
        errors=numbers.errors,
        not_scorable=numbers.not_scorable,
        threshold=threshold,
        pass_rate=pass_rate,
        flipped_items=flipped,
        mean_spread=numbers.mean_spread,
        values={
            key: _value_summary(value, n_boot=n_boot, seed=seed)
            for key, value in (value_chunks or {}).items()
        },
        aggregates=_aggregates(
            spec, chunks, numbers.means, threshold=threshold, corpus=corpus, mean=mean
        ),
        weight=spec.weight,
        normalized_mean=(
            spec.normalize(mean)
            if mean is not None and range_is_bounded(spec.score_range)
            else None
        ),
    )


def summarize_value(cols: ScoreColumns, *, n_boot: int = 2000, seed: int = 0) -> ValueSummary:
    """Statistics of one named value's column, over per-item means like the score's."""
    return _value_summary(_fixed(sorted_columns(cols)), n_boot=n_boot, seed=seed)


def _value_summary(chunks: Chunks, *, n_boot: int, seed: int) -> ValueSummary:
    numbers = scorer_numbers(chunks, n_boot=n_boot, seed=seed)
    if not numbers.count:
        return ValueSummary()
    return ValueSummary(
        count=numbers.count,
        mean=numbers.mean,
        stderr=numbers.stderr,
        ci_low=numbers.ci[0] if numbers.ci else None,
        ci_high=numbers.ci[1] if numbers.ci else None,
        min=numbers.min,
        max=numbers.max,
    )


def _fixed(cols: ScoreColumns) -> Chunks:
    """``Chunks`` of columns already in memory and in order."""
    return lambda: (cols,)


def _needs_item_means(spec: ScorerSpec) -> bool:
    """Whether a declared aggregation runs over every item mean (kind ``items``; the
    built-in ``mean`` is the summary's own mean and needs none)."""
    for name in spec.aggregations:
        try:
            aggregation = get_aggregation(name)
            if aggregation.kind == "items" and aggregation is not MEAN:
                return True
        except UnknownAggregationError:
            continue
    return False


def effective_threshold(spec: ScorerSpec, run_threshold: float | None) -> float | None:
    """A scorer's pass threshold on its own scale.

    The rule: the scorer's own ``threshold`` (config ``threshold``, on its own scale) wins.
    Otherwise the run-wide threshold is a *level* on the normalized 0..1 scale (0 = worst,
    1 = best end of the range) and is mapped onto the scorer's range, flipped when lower is
    better: run threshold 0.7 means ``>= 7`` on a 0..10 scorer and ``<= 0.3`` on a 0..1
    lower-is-better one. A scorer with an unbounded range gets no run-wide threshold.
    """
    if spec.threshold is not None:
        return spec.threshold
    if run_threshold is None or not range_is_bounded(spec.score_range):
        return None
    return threshold_on_scale(
        run_threshold, spec.score_range, higher_is_better=spec.higher_is_better
    )


def scorer_aggregates(
    spec: ScorerSpec,
    cols: ScoreColumns,
    means: FloatArray,
    *,
    threshold: float | None,
    corpus: Sequence[CorpusRow] | None = None,
) -> dict[str, float | None]:
    """Every aggregation ``spec`` declares, by name (see ``assay.summary.aggregations``),
    from a scorer's columns and its item means."""
    return _aggregates(
        spec,
        _fixed(sorted_columns(cols)),
        means,
        threshold=threshold,
        corpus=lambda: corpus or (),
        mean=exact_mean(means),
    )


def _aggregates(
    spec: ScorerSpec,
    chunks: Chunks,
    means: FloatArray | None,
    *,
    threshold: float | None,
    corpus: Callable[[], Sequence[CorpusRow]] | None,
    mean: float | None,
) -> dict[str, float | None]:
    """``scorer_aggregates`` over streamed results. ``means`` (every item mean) is needed
    only by aggregations of kind ``items`` other than the built-in ``mean``, which is
    ``mean`` (the summary's). ``pass@k`` counts a repeat as correct when it
    passes ``threshold``, or, without one, when it reaches the best end of the range (1.0
    on a 0..1 higher-is-better scorer).
    """
    out: dict[str, float | None] = {}
    for name in spec.aggregations:
        try:
            aggregation = get_aggregation(name)
        except UnknownAggregationError as exc:
            log.warning("scorer %r: %s", spec.id, exc)
            out[name] = None
            continue
        if aggregation is MEAN:
            out[name] = mean
        elif aggregation.kind == "items":
            if means is None:
                means = item_means(chunks)
            out[name] = run_aggregation(aggregation, means) if means.shape[0] else None
        elif aggregation.kind == "repeats":
            correct_at = threshold
            if correct_at is None and range_is_bounded(spec.score_range):
                low, high = spec.score_range
                correct_at = high if spec.higher_is_better else low
            if correct_at is None:
                out[name] = None
                continue
            counts, passes = item_counts(
                chunks, threshold=correct_at, higher_is_better=spec.higher_is_better
            )
            out[name] = run_aggregation(aggregation, counts, passes) if counts.shape[0] else None
        else:
            out[name] = corpus_value(aggregation, corpus() if corpus is not None else ())
    return out


def corpus_value(aggregation: Aggregation, rows: Sequence[CorpusRow]) -> float | None:
    """A corpus aggregation over (position, repeat, payload) rows: the function gets each
    repeat's payloads in item order, and the repeats' values are averaged."""
    by_repeat: dict[int, list[tuple[int, Any]]] = defaultdict(list)
    for position, repeat, payload in rows:
        by_repeat[repeat].append((position, payload))
    values = []
    for repeat in sorted(by_repeat):
        ordered = [payload for _, payload in sorted(by_repeat[repeat], key=lambda r: r[0])]
        value = run_aggregation(aggregation, ordered)
        if value is None:
            return None
        values.append(value)
    return float(np.mean(values)) if values else None


def weighted_score(
    specs: Sequence[ScorerSpec], scorers: Mapping[str, ScorerSummary]
) -> tuple[float | None, list[str], list[str]]:
    """``Σ wᵢ·normalized_meanᵢ / Σ wᵢ`` over the scorers with a normalized mean and a
    positive weight, their ids, and the ids of weighted scorers that produced no score.

    The weighted mean of per-scorer normalized means, not a mean of per-item weighted sums:
    each scorer's mean already leaves its errors and not-scorable results out (they count as
    missing, never as 0 or 1) without changing the other scorers' weights item by item, and
    the number is exactly the weighted average of what the summary table shows.

    A bounded scorer with a positive weight but no score at all (a judge that errored on
    every item) makes the weighted score undefined (``None``) rather than silently dropped:
    otherwise the remaining scorers alone would read as the run's score (1.000 with a dead
    judge). Unbounded scorers have no 0..1 form and stay out by design.
    """
    total = weights = 0.0
    used: list[str] = []
    unscored: list[str] = []
    for spec in specs:
        summary = scorers.get(spec.id)
        if spec.weight <= 0:
            continue
        if summary is None or summary.mean is None:
            unscored.append(spec.id)
            continue
        if summary.normalized_mean is None:
            continue
        total += spec.weight * summary.normalized_mean
        weights += spec.weight
        used.append(spec.id)
    if unscored:
        return None, used, unscored
    return (total / weights if weights > 0 else None), used, unscored


class RunFigures(TypedDict):
    """The keywords of ``summarize_source`` that ``summarize_run`` passes on."""

    threshold: float | None
    items: int
    results: int
    item_errors: int
    repeats: int
    duration_s: float | None
    judge_calls: int
    usage: Usage
    cost_usd: float | None
    n_boot: NotRequired[int]
    seed: NotRequired[int]
    target_usage: NotRequired[Usage | None]
    target_cost_usd: NotRequired[float | None]


def summarize_run(
    specs: Sequence[ScorerSpec],
    builder: ScoreColumnsBuilder,
    *,
    latencies_ms: Sequence[float] | FloatArray,
    item_id_for: Callable[[int], str],
    corpus: Mapping[str, Sequence[CorpusRow]] | None = None,
    **figures: Unpack[RunFigures],
) -> RunSummary:
    """``summarize_source`` over in-memory columns and latencies (``MemorySource``)."""
    source = MemorySource(builder, latencies_ms, item_id_for=item_id_for, corpus=corpus)
    return summarize_source(specs, source, **figures)


def summarize_source(
    specs: Sequence[ScorerSpec],
    source: SummarySource,
    *,
    threshold: float | None,
    items: int,
    results: int,
    item_errors: int,
    repeats: int,
    duration_s: float | None,
    judge_calls: int,
    usage: Usage,
    cost_usd: float | None,
    n_boot: int = 2000,
    seed: int = 0,
    target_usage: Usage | None = None,
    target_cost_usd: float | None = None,
) -> RunSummary:
    """The whole run's summary. Scorers come in ``specs`` order; a scorer that reported
    scores without a spec (a custom scorer added late) is summarised under its id rather
    than dropped. ``threshold`` is the run-wide level (see ``effective_threshold``); each
    scorer is streamed from ``source`` in turn, so at most one scorer's numbers are held."""
    lat_mean, lat_p50, lat_p95 = source.latency_stats()
    all_specs = list(specs)
    known = {s.id for s in all_specs}
    all_specs += [ScorerSpec(id=sid, label=sid) for sid in source.scorer_ids() if sid not in known]
    scorers = {
        spec.id: summarize_from_chunks(
            spec,
            partial(source.score_chunks, spec.id),
            threshold=effective_threshold(spec, threshold),
            item_ids=source.item_ids,
            n_boot=n_boot,
            seed=seed,
            value_chunks={
                key: partial(source.value_chunks, spec.id, key)
                for key in source.value_keys(spec.id)
            },
            corpus=partial(source.corpus_rows, spec.id),
        )
        for spec in all_specs
    }
    weighted, weighted_ids, unscored = weighted_score(all_specs, scorers)
    return RunSummary(
        items=items,
        results=results,
        item_errors=item_errors,
        repeats=repeats,
        scorers=scorers,
        weighted_score=weighted,
        weighted_scorers=weighted_ids,
        unscored_scorers=unscored,
        latency_ms_mean=lat_mean,
        latency_ms_p50=lat_p50,
        latency_ms_p95=lat_p95,
        duration_s=duration_s,
        judge_calls=judge_calls,
        usage=usage,
        cost_usd=cost_usd,
        target_usage=target_usage or Usage(),
        target_cost_usd=target_cost_usd,
    )
