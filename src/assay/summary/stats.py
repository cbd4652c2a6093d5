"""Run statistics: per-item means over repeats, bootstrap CIs, pass rates, flips.

Every statistic is computed on per-item means, so an item run three times counts once and a
scorer's error on one repeat does not drop the item (its other repeats still count). Errors
and not-scorable results are counted, never averaged: the columns hold NaN for them.
Everything is vectorised numpy so a 100,000-item run summarises in milliseconds.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.summary.aggregations import (
    Aggregation,
    UnknownAggregationError,
    get_aggregation,
    run_aggregation,
)
from assay.summary.columns import ERROR, NOT_SCORABLE, ScoreColumns, ScoreColumnsBuilder
from assay.types import (
    RunSummary,
    ScorerSpec,
    ScorerSummary,
    Usage,
    ValueSummary,
    range_is_bounded,
    threshold_on_scale,
)

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CorpusRow = tuple[int, int, Any]
"""(position, repeat, corpus payload) of one ready result."""

BOOTSTRAP_MAX_CELLS = 1 << 21
"""Resampled values held at once (~16 MB of indices): bounds bootstrap memory for large n."""

MULTINOMIAL_RATIO = 8
"""At most one distinct number per 8 values: resample counts per number, not indices (the
rule ``assay.analysis.calibration.resample`` uses for its cells)."""


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
    """Group the ready scores by position: mean, ready-repeat count, max-min, passes.

    When every position holds at most one number (one repeat: the common case) the grouping
    is a sort: the same arrays, computed with a third of the memory (a 100k-item summary
    otherwise holds ~90 bytes per result at once; ``n`` and ``spread`` are then read-only
    constant views).
    """
    ready = cols.ready
    values = cols.value[ready]
    if not cols.repeat.any():
        single = _one_per_position(cols.position[ready], values, threshold, higher_is_better)
        if single is not None:
            return single
    positions, inverse = np.unique(cols.position[ready], return_inverse=True)
    k = positions.shape[0]
    n = np.bincount(inverse, minlength=k).astype(np.int64)
    sums = np.bincount(inverse, weights=values, minlength=k)
    mean = sums / np.maximum(n, 1)
    lo = np.full(k, np.inf)
    hi = np.full(k, -np.inf)
    np.minimum.at(lo, inverse, values)
    np.maximum.at(hi, inverse, values)
    if threshold is None:
        passes = np.zeros(k, dtype=np.int64)
    else:
        verdicts = passing(values, threshold, higher_is_better=higher_is_better)
        passes = np.bincount(inverse, weights=verdicts, minlength=k).astype(np.int64)
    return ItemStats(
        position=positions.astype(np.int64),
        mean=mean,
        n=n,
        spread=hi - lo,
        passes=passes,
    )


def _one_per_position(
    positions: IntArray, values: FloatArray, threshold: float | None, higher_is_better: bool
) -> ItemStats | None:
    """``item_stats`` when no position repeats (else ``None``): each item's mean is its one
    number (``+ 0.0``, as the grouped sum ``0.0 + v`` gives: ``-0.0`` becomes ``0.0``)."""
    order = np.argsort(positions, kind="stable")
    positions = positions[order]
    if positions.shape[0] > 1 and not bool((positions[1:] != positions[:-1]).all()):
        return None
    mean = values[order]
    del order
    mean += 0.0
    k = positions.shape[0]
    if threshold is None:
        passes: IntArray = np.broadcast_to(np.int64(0), (k,))
    else:
        passes = passing(mean, threshold, higher_is_better=higher_is_better).astype(np.int64)
    return ItemStats(
        position=positions.astype(np.int64, copy=False),
        mean=mean,
        n=np.broadcast_to(np.int64(1), (k,)),
        spread=np.broadcast_to(np.float64(0.0), (k,)),
        passes=passes,
    )


def bootstrap_mean_ci(
    values: FloatArray,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean; ``None`` below two values (no spread to resample).

    Deterministic for a given ``seed``. Resamples are drawn in chunks of at most
    ``BOOTSTRAP_MAX_CELLS`` values so 100k items x 2000 resamples never materialise at once.
    When the values take few distinct numbers (at most one per ``MULTINOMIAL_RATIO`` values:
    0/1 scores, a 1-5 scale) each resample is drawn as how many of its n draws fell on each
    number (``Multinomial(n, counts / n)``), the same bootstrap distribution at a cost that
    grows with the distinct numbers, not with n (see ``bootstrap_mean_cis``).
    """
    return bootstrap_mean_cis([values], n_boot=n_boot, seed=seed, confidence=confidence)[0]


def bootstrap_mean_cis(
    arrays: Sequence[FloatArray],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[tuple[float, float] | None]:
    """``bootstrap_mean_ci`` of several arrays, each CI exactly what it gives alone.

    Two ways to draw the same resamples, chosen per array from its values alone:

    - **counts**, when the array holds at most one distinct number per
      ``MULTINOMIAL_RATIO`` values: a resample of n values drawn with replacement from
      numbers ``x`` that occur ``c`` times is fully described by how many draws fell on each
      number, and those counts follow ``Multinomial(n, c / n)`` exactly. The resample's mean
      is ``counts @ x / n``. ``default_rng(seed).multinomial`` draws them (``n_boot`` rows,
      in chunks; the stream does not depend on the chunking): 2,000 resamples of 100,000
      0/1 scores take a millisecond instead of drawing 200 million indices.
    - **indices**, otherwise: ``default_rng(seed).integers(0, n, (rows, n))`` in chunks of
      at most ``BOOTSTRAP_MAX_CELLS`` values. These draws depend only on ``seed`` and the
      length, so index arrays of the same length (a scorer's score and its named values,
      over the same items) share one draw per chunk: each extra array costs the gather.

    Both are the percentile bootstrap with ``n_boot`` resamples; they differ only in the
    random numbers drawn, so the same data gives a CI within Monte Carlo error of the other
    way's (``tests/summary/test_stats.py`` compares the two distributions).
    """
    out: list[tuple[float, float] | None] = [None] * len(arrays)
    by_length: dict[int, list[int]] = {}
    alpha = (1.0 - confidence) / 2.0
    percentiles = [100.0 * alpha, 100.0 * (1.0 - alpha)]
    for k, values in enumerate(arrays):
        n = int(values.shape[0])
        if n < 2 or n_boot < 1:
            continue
        numbers, counts = np.unique(values, return_counts=True)
        if numbers.shape[0] * MULTINOMIAL_RATIO <= n and bool(np.isfinite(numbers).all()):
            means = _count_resample_means(numbers, counts, n_boot, seed)
            low, high = np.percentile(means, percentiles)
            out[k] = (float(low), float(high))
        else:
            by_length.setdefault(n, []).append(k)
    for n, members in by_length.items():
        rng = np.random.default_rng(seed)
        all_means = np.empty((len(members), n_boot), dtype=np.float64)
        rows = max(1, BOOTSTRAP_MAX_CELLS // n)
        for start in range(0, n_boot, rows):
            stop = min(n_boot, start + rows)
            idx = rng.integers(0, n, size=(stop - start, n))
            for j, k in enumerate(members):
                all_means[j, start:stop] = arrays[k][idx].mean(axis=1)
        for j, k in enumerate(members):
            low, high = np.percentile(all_means[j], percentiles)
            out[k] = (float(low), float(high))
    return out


def _count_resample_means(
    numbers: FloatArray, counts: IntArray, n_boot: int, seed: int
) -> FloatArray:
    """Means of ``n_boot`` bootstrap resamples of the values ``numbers`` occurring
    ``counts`` times, drawn as per-number counts (see ``bootstrap_mean_cis``)."""
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    probabilities = counts / n
    means = np.empty(n_boot, dtype=np.float64)
    rows = max(1, BOOTSTRAP_MAX_CELLS // numbers.shape[0])
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        drawn = rng.multinomial(n, probabilities, size=stop - start)
        means[start:stop] = (drawn @ numbers) / n
    return means


def stderr_of_mean(values: FloatArray) -> float | None:
    """Sample standard deviation (ddof=1) over sqrt(n); ``None`` below two values."""
    n = int(values.shape[0])
    if n < 2:
        return None
    return float(np.std(values, ddof=1) / np.sqrt(n))


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
    """One scorer's summary over per-item means (see the module docstring).

    ``threshold`` is on the scorer's own scale (``effective_threshold`` resolves the run's).
    ``item_id_for`` maps a position to its item id; it is only called for flipped items,
    so callers need not materialise every id. ``mean_spread`` covers items with at least
    two ready repeats (an item with one number has no spread to measure).
    ``value_columns`` (value key -> column) are summarised into ``values``; ``corpus`` holds
    the (position, repeat, payload) rows a corpus aggregation needs.
    """
    stats = item_stats(cols, threshold=threshold, higher_is_better=spec.higher_is_better)
    means = stats.mean
    count = len(stats)
    value_means = {key: item_stats(vcols).mean for key, vcols in (value_columns or {}).items()}
    ci, *value_cis = bootstrap_mean_cis([means, *value_means.values()], n_boot=n_boot, seed=seed)
    pass_rate: float | None = None
    flipped: list[str] = []
    if threshold is not None and count:
        verdicts = passing(means, threshold, higher_is_better=spec.higher_is_better)
        pass_rate = float(verdicts.mean())
        flips = (stats.passes > 0) & (stats.passes < stats.n)
        flipped = [item_id_for(int(p)) for p in stats.position[flips]]
    multi = stats.n >= 2
    return ScorerSummary(
        scorer_id=spec.id,
        scorer_label=spec.label,
        higher_is_better=spec.higher_is_better,
        score_range=spec.score_range,
        count=count,
        mean=float(means.mean()) if count else None,
        stderr=stderr_of_mean(means),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        min=float(means.min()) if count else None,
        max=float(means.max()) if count else None,
        errors=int(np.count_nonzero(cols.status == ERROR)),
        not_scorable=int(np.count_nonzero(cols.status == NOT_SCORABLE)),
        threshold=threshold,
        pass_rate=pass_rate,
        flipped_items=flipped,
        mean_spread=float(stats.spread[multi].mean()) if multi.any() else None,
        values={
            key: _value_summary(vmeans, vci)
            for (key, vmeans), vci in zip(value_means.items(), value_cis, strict=True)
        },
        aggregates=scorer_aggregates(spec, cols, means, threshold=threshold, corpus=corpus),
        weight=spec.weight,
        normalized_mean=(
            spec.normalize(float(means.mean()))
            if count and range_is_bounded(spec.score_range)
            else None
        ),
    )


def summarize_value(cols: ScoreColumns, *, n_boot: int = 2000, seed: int = 0) -> ValueSummary:
    """Statistics of one named value's column, over per-item means like the score's."""
    means = item_stats(cols).mean
    return _value_summary(means, bootstrap_mean_ci(means, n_boot=n_boot, seed=seed))


def _value_summary(means: FloatArray, ci: tuple[float, float] | None) -> ValueSummary:
    count = int(means.shape[0])
    if not count:
        return ValueSummary()
    return ValueSummary(
        count=count,
        mean=float(means.mean()),
        stderr=stderr_of_mean(means),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        min=float(means.min()),
        max=float(means.max()),
    )


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
    """Every aggregation ``spec`` declares, by name (see ``assay.summary.aggregations``).

    ``pass@k`` counts a repeat as correct when it passes ``threshold``, or, without one,
    when it reaches the best end of the range (1.0 on a 0..1 higher-is-better scorer).
    """
    out: dict[str, float | None] = {}
    for name in spec.aggregations:
        try:
            aggregation = get_aggregation(name)
        except UnknownAggregationError as exc:
            log.warning("scorer %r: %s", spec.id, exc)
            out[name] = None
            continue
        if aggregation.kind == "items":
            out[name] = run_aggregation(aggregation, means) if means.shape[0] else None
        elif aggregation.kind == "repeats":
            correct_at = threshold
            if correct_at is None and range_is_bounded(spec.score_range):
                low, high = spec.score_range
                correct_at = high if spec.higher_is_better else low
            if correct_at is None:
                out[name] = None
                continue
            stats = item_stats(cols, threshold=correct_at, higher_is_better=spec.higher_is_better)
            # writable arrays for the aggregation (one repeat gives read-only constant views)
            counts, passes = np.array(stats.n), np.array(stats.passes)
            out[name] = run_aggregation(aggregation, counts, passes) if len(stats) else None
        else:
            out[name] = corpus_value(aggregation, corpus or ())
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
) -> tuple[float | None, list[str]]:
    """``Σ wᵢ·normalized_meanᵢ / Σ wᵢ`` over the scorers with a normalized mean and a
    positive weight, and their ids.

    The weighted mean of per-scorer normalized means, not a mean of per-item weighted sums:
    each scorer's mean already leaves its errors and not-scorable results out (they count as
    missing, never as 0 or 1) without changing the other scorers' weights item by item, and
    the number is exactly the weighted average of what the summary table shows.
    """
    total = weights = 0.0
    used: list[str] = []
    for spec in specs:
        summary = scorers.get(spec.id)
        if summary is None or summary.normalized_mean is None or spec.weight <= 0:
            continue
        total += spec.weight * summary.normalized_mean
        weights += spec.weight
        used.append(spec.id)
    return (total / weights if weights > 0 else None), used


def latency_stats(
    latencies_ms: Sequence[float] | FloatArray,
) -> tuple[float | None, float | None, float | None]:
    """Mean, p50 and p95 of the latencies, ignoring NaN (a stored-output run has none)."""
    lat = np.asarray(latencies_ms, dtype=np.float64)
    missing = np.isnan(lat)
    if missing.any():
        lat = lat[~missing]
    del missing
    if lat.shape[0] == 0:
        return None, None, None
    p50, p95 = np.percentile(lat, [50.0, 95.0])
    return float(lat.mean()), float(p50), float(p95)


def summarize_run(
    specs: Sequence[ScorerSpec],
    builder: ScoreColumnsBuilder,
    *,
    threshold: float | None,
    latencies_ms: Sequence[float] | FloatArray,
    items: int,
    results: int,
    item_errors: int,
    repeats: int,
    duration_s: float | None,
    judge_calls: int,
    usage: Usage,
    cost_usd: float | None,
    item_id_for: Callable[[int], str],
    n_boot: int = 2000,
    seed: int = 0,
    corpus: Mapping[str, Sequence[CorpusRow]] | None = None,
    target_usage: Usage | None = None,
    target_cost_usd: float | None = None,
) -> RunSummary:
    """The whole run's summary. Scorers come in ``specs`` order; a scorer that reported
    scores without a spec (a custom scorer added late) is summarised under its id rather
    than dropped. ``threshold`` is the run-wide level (see ``effective_threshold``);
    ``corpus`` maps scorer ids to the payload rows of their corpus aggregations."""
    # latencies first, then let them go: the scorers' arrays need the memory next
    lat_mean, lat_p50, lat_p95 = latency_stats(latencies_ms)
    del latencies_ms
    all_specs = list(specs)
    known = {s.id for s in all_specs}
    all_specs += [ScorerSpec(id=sid, label=sid) for sid in builder.scorer_ids() if sid not in known]
    scorers = {
        spec.id: summarize_scorer(
            spec,
            builder.columns(spec.id),
            threshold=effective_threshold(spec, threshold),
            item_id_for=item_id_for,
            n_boot=n_boot,
            seed=seed,
            value_columns={
                key: builder.value_columns(spec.id, key) for key in builder.value_keys(spec.id)
            },
            corpus=(corpus or {}).get(spec.id),
        )
        for spec in all_specs
    }
    weighted, weighted_ids = weighted_score(all_specs, scorers)
    return RunSummary(
        items=items,
        results=results,
        item_errors=item_errors,
        repeats=repeats,
        scorers=scorers,
        weighted_score=weighted,
        weighted_scorers=weighted_ids,
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
