"""The entry points: every statistic of a calibration kind, and paired differences.

Inputs are validated here once (a bad row raises ``ValueError`` naming the argument and
the row); the statistic modules trust their arrays. Every statistic of one call is
computed on the same bootstrap resamples (``resample.run_bootstrap``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.calibration.statistics import binary, ordinal, pairwise
from assay.calibration.statistics.estimate import Estimate, PointOnly, estimate_from
from assay.calibration.statistics.resample import (
    BootstrapResult,
    FloatArray,
    IntArray,
    StatGroup,
    cells_of,
    run_bootstrap,
)
from assay.calibration.statistics.results import (
    CalibrationStats,
    ConfusionMatrix,
    Kind,
    PairedDifference,
    ReliabilityBin,
    ReliabilityCurve,
)

STATISTICS: dict[str, tuple[str, ...]] = {
    "binary": (
        *binary.CONFUSION_STATISTICS,
        *binary.RANKING_STATISTICS,
        *binary.RELIABILITY_STATISTICS,
    ),
    "ordinal": tuple(ordinal.ORDINAL_STATISTICS),
    "numeric": tuple(ordinal.ORDINAL_STATISTICS),
    "pairwise": tuple(pairwise.PAIRWISE_STATISTICS),
}
"""The statistic names of each kind (the keys of ``CalibrationStats.to_json()``)."""

_REASONS: dict[str, str] = {
    **binary.CONFUSION_STATISTICS,
    **binary.RANKING_STATISTICS,
    **binary.RELIABILITY_STATISTICS,
    **ordinal.ORDINAL_STATISTICS,
    **pairwise.PAIRWISE_STATISTICS,
}


def float_array(values: Sequence[Any] | FloatArray, field: str) -> FloatArray:
    """Finite floats, or ``ValueError`` naming the first bad row of ``field``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        for i, value in enumerate(values):
            try:
                float(value)
            except (TypeError, ValueError):
                raise ValueError(f"{field}[{i}] is {value!r}, not a number") from None
        raise
    if array.ndim != 1:
        raise ValueError(f"{field} must be one-dimensional, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        i = int(bad[0])
        shown = values[i] if not isinstance(values, np.ndarray) else array[i]
        raise ValueError(f"{field}[{i}] is {shown!r}; drop unscored items first")
    return array


def binary_labels(values: Sequence[Any] | FloatArray) -> IntArray:
    """Labels 0/1 (bools and 0.0/1.0 too), or ``ValueError`` naming the first other value."""
    array = float_array(values, "labels")
    bad = np.flatnonzero((array != 0.0) & (array != 1.0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"labels[{i}] is {array[i]}; binary labels are 0 or 1 (map them with label_map)"
        )
    return array.astype(np.int64)


def _same_length(n_labels: int, n_scores: int, field: str) -> int:
    if n_labels != n_scores:
        raise ValueError(f"labels has {n_labels} items but {field} has {n_scores}")
    if n_labels == 0:
        raise ValueError("no items: calibration needs at least one labelled item")
    return n_labels


def _binary_threshold(scores: FloatArray, threshold: float | None) -> float:
    if threshold is not None:
        if not math.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number, got {threshold}")
        return float(threshold)
    if np.all((scores == 0.0) | (scores == 1.0)):
        return 0.5
    raise ValueError(
        "binary calibration of scores other than 0/1 needs a threshold "
        "(verdict = score >= threshold)"
    )


def _in_unit_interval(scores: FloatArray) -> bool:
    return bool(np.all((scores >= 0.0) & (scores <= 1.0)))


@dataclass(frozen=True)
class _Plan:
    """The statistic groups of one kind on one scorer's scores, and what is skipped why."""

    groups: dict[str, StatGroup]
    skipped: dict[str, str]


def _binary_plan(labels: IntArray, scores: FloatArray, threshold: float) -> _Plan:
    verdicts = (scores >= threshold).astype(np.int64)
    groups: dict[str, StatGroup] = {
        "confusion": binary.confusion_group(labels, verdicts),
        "ranking": binary.ranking_group(labels, scores),
    }
    skipped: dict[str, str] = {}
    if _in_unit_interval(scores):
        groups["reliability"] = binary.reliability_group(labels, scores)
    else:
        skipped["ece"] = "the reliability curve needs scores in [0, 1]"
    return _Plan(groups, skipped)


def _ordinal_plan(labels: FloatArray, scores: FloatArray) -> _Plan:
    """Every ordinal/numeric group; κ_w and ordinal α only for few distinct values."""
    groups: dict[str, StatGroup] = {
        "pearson, mae, rmse": ordinal.moments_group(labels, scores),
        "spearman": ordinal.spearman_group(labels, scores),
        "kendall_tau_b": ordinal.kendall_group(labels, scores),
        "krippendorff_alpha_interval": ordinal.alpha_interval_group(labels, scores),
    }
    skipped: dict[str, str] = {}
    why_not = ordinal.too_many_categories(labels, scores)
    if why_not is None:
        groups["quadratic_weighted_kappa"] = ordinal.qwk_group(labels, scores)
        groups["krippendorff_alpha_ordinal"] = ordinal.alpha_ordinal_group(labels, scores)
    else:
        skipped["quadratic_weighted_kappa"] = why_not
        skipped["krippendorff_alpha_ordinal"] = why_not
    return _Plan(groups, skipped)


def _pairwise_inputs(
    labels: Sequence[Any], scores: Sequence[Any], field: str
) -> tuple[IntArray, IntArray, IntArray | None]:
    human = pairwise.verdict_codes(list(labels), "labels")
    firsts: list[object] = []
    seconds: list[object] = []
    for i, entry in enumerate(scores):
        if isinstance(entry, str):
            firsts.append(entry)
            continue
        if not isinstance(entry, Sequence) or len(entry) != 2:
            raise ValueError(
                f"{field}[{i}] is {entry!r}; give one verdict per pair or two "
                "(original order, swapped order mapped back to A/B)"
            )
        firsts.append(entry[0])
        seconds.append(entry[1])
    if firsts and seconds and len(seconds) != len(firsts):
        raise ValueError(f"{field} mixes single verdicts and (original, swapped) pairs")
    first = pairwise.verdict_codes(firsts, field)
    second = pairwise.verdict_codes(seconds, field) if seconds else None
    return human, first, second


def _pairwise_plan(human: FloatArray, first: FloatArray, second: FloatArray | None) -> _Plan:
    h, f = human.astype(np.int64), first.astype(np.int64)
    s = None if second is None else second.astype(np.int64)
    verdict, biased = pairwise.final_verdicts(f, s)
    skipped: dict[str, str] = {}
    if second is None:
        skipped["position_bias_rate"] = pairwise.PAIRWISE_STATISTICS["position_bias_rate"]
    return _Plan(
        {"pairwise": pairwise.pairwise_group(h, verdict, biased, second is not None)}, skipped
    )


def _tables(
    result: BootstrapResult, names: Sequence[str], skipped: Mapping[str, str], n: int
) -> tuple[dict[str, Estimate], dict[str, str], dict[str, float]]:
    statistics: dict[str, Estimate] = {}
    undefined: dict[str, str] = dict(skipped)
    points: dict[str, float] = {}
    for name in names:
        if name in undefined:
            continue
        outcome = estimate_from(result.point[name], result.replicates[name], n, _REASONS[name])
        if isinstance(outcome, Estimate):
            statistics[name] = outcome
        elif isinstance(outcome, PointOnly):
            undefined[name], points[name] = outcome.reason, outcome.value
        else:
            undefined[name] = outcome
    return statistics, undefined, points


def _reliability_curve(labels: IntArray, scores: FloatArray) -> ReliabilityCurve:
    bins = binary.reliability_bins(scores)
    edges = np.linspace(0.0, 1.0, binary.N_BINS + 1)
    counts = np.bincount(bins, minlength=binary.N_BINS)
    predicted = np.bincount(bins, weights=scores, minlength=binary.N_BINS)
    observed = np.bincount(bins, weights=labels.astype(np.float64), minlength=binary.N_BINS)
    return ReliabilityCurve(
        bins=[
            ReliabilityBin(
                low=float(edges[b]),
                high=float(edges[b + 1]),
                count=int(counts[b]),
                mean_predicted=float(predicted[b] / counts[b]) if counts[b] else None,
                observed_frequency=float(observed[b] / counts[b]) if counts[b] else None,
            )
            for b in range(binary.N_BINS)
        ]
    )


def _confusion_matrix(labels: IntArray, scores: FloatArray, threshold: float) -> ConfusionMatrix:
    verdicts = scores >= threshold
    positive = labels == 1
    return ConfusionMatrix(
        threshold=threshold,
        tp=int(np.sum(positive & verdicts)),
        fp=int(np.sum(~positive & verdicts)),
        fn=int(np.sum(positive & ~verdicts)),
        tn=int(np.sum(~positive & ~verdicts)),
    )


def calibration_statistics(
    kind: Kind,
    labels: Sequence[Any] | FloatArray,
    scores: Sequence[Any] | FloatArray,
    *,
    threshold: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> CalibrationStats:
    """Every statistic of ``kind`` between human ``labels`` and scorer ``scores``.

    - ``binary``: labels 0/1 (1 = the class high scores predict); scores on any scale,
      verdict ``score >= threshold`` (required unless scores are 0/1). Confusion matrix
      always; reliability curve and ECE when scores are in [0, 1].
    - ``ordinal`` / ``numeric``: labels and scores as numbers on the same scale (map labels
      with the config's ``label_map`` first); κ_w and ordinal α need discrete values.
      ``threshold`` is only recorded here (binarise the labels and use ``binary`` for
      verdict statistics; ``disagreements`` takes it too).
    - ``pairwise``: labels ``"A"``/``"B"``/``"tie"``; scores one verdict per pair or
      ``(original order, swapped order mapped back)`` pairs (see ``pairwise``).

    Each statistic carries a percentile bootstrap 95% CI over ``n_resamples`` resamples of
    the items, deterministic for ``seed``.
    """
    given = _validated(kind, labels, scores, threshold, "scores")
    cells, counts = _ordered_cells(kind, *cells_of(np.column_stack(given.columns)))
    plan = _plan(kind, [cells[:, j] for j in range(cells.shape[1])], given.threshold)
    result = run_bootstrap(plan.groups, counts, n_resamples=n_resamples, seed=seed)
    statistics, undefined, points = _tables(result, STATISTICS[kind], plan.skipped, given.n)
    return CalibrationStats(
        kind=kind,
        n=given.n,
        threshold=given.threshold,
        n_resamples=n_resamples,
        seed=seed,
        statistics=statistics,
        undefined=undefined,
        points=points,
        confusion_matrix=given.confusion_matrix,
        reliability_curve=given.reliability_curve,
    )


def _ordered_cells(
    kind: Kind, cells: FloatArray, counts: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Cells ordered for the statistics of ``kind``: binary by label, then score (each
    class is then one slice for the ranking statistics); the others by score, then label
    (score order is then the cells' own order for ``ranks.Ranking`` and the inversion
    count)."""
    if kind == "binary":
        order = np.lexsort((cells[:, 1], cells[:, 0]))
    else:  # ties on the score by label: the ranks and inversions need no gather then
        order = np.lexsort((cells[:, 0], cells[:, 1]))
    return cells[order], counts[order]


@dataclass(frozen=True)
class _Validated:
    """Checked inputs as float columns: (labels, scores) or, for pairwise, (human, first
    verdict[, swapped verdict]) as codes."""

    n: int
    columns: list[FloatArray]
    threshold: float | None = None
    confusion_matrix: ConfusionMatrix | None = None
    reliability_curve: ReliabilityCurve | None = None


def _validated(
    kind: Kind,
    labels: Sequence[Any] | FloatArray,
    scores: Sequence[Any] | FloatArray,
    threshold: float | None,
    field: str,
) -> _Validated:
    if kind == "binary":
        y = binary_labels(labels)
        s = float_array(scores, field)
        n = _same_length(y.shape[0], s.shape[0], field)
        cut = _binary_threshold(s, threshold)
        curve = _reliability_curve(y, s) if _in_unit_interval(s) else None
        return _Validated(n, [y.astype(np.float64), s], cut, _confusion_matrix(y, s, cut), curve)
    if kind in ("ordinal", "numeric"):
        x = float_array(labels, "labels")
        s = float_array(scores, field)
        n = _same_length(x.shape[0], s.shape[0], field)
        return _Validated(n, [x, s], threshold)
    if kind == "pairwise":
        human, first, second = _pairwise_inputs(list(labels), list(scores), field)
        n = _same_length(human.shape[0], first.shape[0], field)
        columns = [human, first] if second is None else [human, first, second]
        return _Validated(n, [c.astype(np.float64) for c in columns])
    raise ValueError(f"kind is {kind!r}; one of binary, ordinal, numeric, pairwise")


def _plan(kind: Kind, columns: list[FloatArray], threshold: float | None) -> _Plan:
    """The statistic groups of ``kind`` over (label, score) columns of cells."""
    if kind == "binary":
        assert threshold is not None  # _validated always sets it for binary
        return _binary_plan(columns[0].astype(np.int64), columns[1], threshold)
    if kind in ("ordinal", "numeric"):
        return _ordinal_plan(columns[0], columns[1])
    return _pairwise_plan(columns[0], columns[1], columns[2] if len(columns) > 2 else None)


def paired_difference(
    kind: Kind,
    labels: Sequence[Any] | FloatArray,
    scores_a: Sequence[Any] | FloatArray,
    scores_b: Sequence[Any] | FloatArray,
    *,
    threshold: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> PairedDifference:
    """Each statistic of configuration A minus the same statistic of B on the same items.

    Both are computed on the same bootstrap resamples, so the CI of the difference keeps
    the pairing (items easy for both scorers do not widen it). A statistic undefined for
    either configuration is undefined for the difference, with the reason."""
    given_a = _validated(kind, labels, scores_a, threshold, "scores_a")
    given_b = _validated(kind, labels, scores_b, threshold, "scores_b")
    if len(given_a.columns) != len(given_b.columns):
        raise ValueError("scores_a and scores_b must both be judged once or both in two orders")
    n, width = given_a.n, len(given_a.columns)
    _same_length(n, given_b.n, "scores_b")
    joint = np.column_stack([*given_a.columns, *given_b.columns[1:]])
    cells, counts = _ordered_cells(kind, *cells_of(joint))
    columns = [cells[:, j] for j in range(cells.shape[1])]
    plan_a = _plan(kind, columns[:width], given_a.threshold)
    plan_b = _plan(kind, [columns[0], *columns[width:]], given_b.threshold)
    groups = {f"a:{k}": g for k, g in plan_a.groups.items()}
    groups.update({f"b:{k}": g for k, g in plan_b.groups.items()})
    both = run_bootstrap(_prefixed(groups), counts, n_resamples=n_resamples, seed=seed)
    statistics: dict[str, Estimate] = {}
    undefined: dict[str, str] = {}
    points: dict[str, float] = {}
    for name in STATISTICS[kind]:
        why = plan_a.skipped.get(name) or plan_b.skipped.get(name)
        if why is not None:
            undefined[name] = why
            continue
        point_a, point_b = both.point[f"a:{name}"], both.point[f"b:{name}"]
        if not math.isfinite(point_a) or not math.isfinite(point_b):
            side = "A" if not math.isfinite(point_a) else "B"
            undefined[name] = f"undefined for {side}: {_REASONS[name]}"
            continue
        diff = both.replicates[f"a:{name}"] - both.replicates[f"b:{name}"]
        outcome = estimate_from(point_a - point_b, diff, n, _REASONS[name])
        if isinstance(outcome, Estimate):
            statistics[name] = outcome
        elif isinstance(outcome, PointOnly):
            undefined[name], points[name] = outcome.reason, outcome.value
        else:
            undefined[name] = outcome
    return PairedDifference(
        kind=kind,
        n=n,
        threshold=threshold,
        n_resamples=n_resamples,
        seed=seed,
        statistics=statistics,
        undefined=undefined,
        points=points,
    )


def _prefixed(groups: Mapping[str, StatGroup]) -> dict[str, StatGroup]:
    """Groups whose statistic names carry their group's ``a:``/``b:`` prefix."""

    def wrap(prefix: str, group: StatGroup) -> StatGroup:
        def run(weights: FloatArray) -> dict[str, FloatArray]:
            return {f"{prefix}{name}": values for name, values in group(weights).items()}

        return run

    return {label: wrap(label[:2], group) for label, group in groups.items()}
