"""Standard errors of task aggregates, exactly as lm-evaluation-harness 0.4.13 computes them.

* ``mean``: the sample standard deviation (Bessel's correction) over √n;
* ``acc_all``: the mean stderr of per-question all-correct indicators;
* the corpus statistics (median, matthews_corrcoef, f1, perplexity, bleu, chrf, chrf++, ter,
  nanmean): lm-eval's bootstrap, ``bootstrap_iters`` resamples (capped at 100 for the
  metrics bleu, chrf, chrf++ and ter) drawn in chunks of ``min(1000, iters)``, chunk ``i``
  from ``random.Random(i)`` with ``rnd.choices(items, k=n)``; the stderr is the sample
  standard deviation of the replicates. Only whole chunks are drawn (``iters // chunk``),
  as in lm-eval;
* everything else, a single item, or ``bootstrap_iters`` of 0/None: no stderr (``None``,
  lm-eval's ``"N/A"``).

The resample indices are drawn from numpy's MT19937 with the state of Python's
``random.Random(i)`` and Python's ``random()`` double formula, so they are the very indices
lm-eval draws, without a Python call per draw; the statistics are then evaluated in the
same arithmetic order as lm-eval (left-to-right sums, the sorted middle element), so the
values match lm-eval run without multiprocessing (which gives the same numbers as with it).
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.tasks.metrics import aggregations as agg
from assay.tasks.metrics.registry import TASK_AGGREGATIONS

CAPPED_METRICS = frozenset({"bleu", "chrf", "chrf++", "ter"})
"""Metrics whose bootstrap lm-eval caps at 100 iterations (by metric name)."""
CAPPED_ITERS = 100
CHUNK = 1000

IntMatrix = npt.NDArray[np.int64]
IntArray = npt.NDArray[np.int64]


def sample_stddev(items: Sequence[float]) -> float:
    """Standard deviation with Bessel's correction (lm-eval's arithmetic order)."""
    if len(items) < 2:
        raise ValueError("a sample standard deviation needs at least two values")
    mu = sum(items) / len(items)
    return math.sqrt(sum([(x - mu) ** 2 for x in items]) / (len(items) - 1))


def mean_stderr(items: Sequence[float]) -> float:
    """``sample_stddev / √n``."""
    return sample_stddev(items) / math.sqrt(len(items))


def acc_all_stderr(items: list[Any]) -> float:
    """lm-eval's ``acc_all`` stderr: the mean stderr of per-question all-correct flags, the
    questions keyed by question id alone (as lm-eval does)."""
    groups = agg.question_groups(items, by_paragraph=False)
    return mean_stderr([int(all(g)) for g in groups])


# ----------------------------------------------------------------------------- bootstrap


def _python_random_indices(seed: int, draws: int, n: int) -> IntMatrix:
    """``[[floor(rnd.random() * n) for _ in range(n)] for _ in range(draws)]`` for
    ``rnd = random.Random(seed)``: the indices ``rnd.choices(range(n), k=n)`` returns,
    ``draws`` times in a row, computed with numpy from the same Mersenne Twister state."""
    state = random.Random(seed).getstate()[1]
    generator = np.random.MT19937()
    generator.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.asarray(state[:624], dtype=np.uint32), "pos": int(state[624])},
    }
    raw = generator.random_raw(2 * draws * n).astype(np.uint64)
    high = raw[0::2] >> np.uint64(5)
    low = raw[1::2] >> np.uint64(6)
    doubles = (high * np.uint64(67108864) + low).astype(np.float64) / 9007199254740992.0
    return np.floor(doubles * float(n)).astype(np.int64).reshape(draws, n)


def resample_indices(items_count: int, iters: int) -> Iterator[IntMatrix]:
    """The chunks of resample indices lm-eval's bootstrap draws for ``iters`` iterations
    over ``items_count`` items (one row per replicate)."""
    chunk = min(CHUNK, iters)
    for i in range(iters // chunk):
        yield _python_random_indices(i, chunk, items_count)


def bootstrap_replicates(
    statistic: Callable[[list[Any]], Any], items: Sequence[Any], iters: int
) -> list[float]:
    """The bootstrap replicates of ``statistic`` (lm-eval's ``_bootstrap_internal_no_mp``)."""
    if iters <= 0:
        return []
    values = list(items)
    out: list[float] = []
    for rows in resample_indices(len(values), iters):
        out.extend(statistic([values[j] for j in row]) for row in rows.tolist())
    return out


def _numeric(items: Sequence[Any]) -> npt.NDArray[np.float64] | None:
    if not all(isinstance(x, int | float | np.number) and not isinstance(x, bool) for x in items):
        return None
    return np.asarray(items, dtype=np.float64)


def _median_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    values = _numeric(items)
    if values is None:
        return None
    middle = len(items) // 2
    out: list[float] = []
    for rows in resample_indices(len(items), iters):
        out.extend(np.sort(values[rows], axis=1)[:, middle].tolist())
    return out


def _sequential_means(items: Sequence[Any], iters: int) -> Iterator[list[float]] | None:
    """Per chunk, the resamples' ``sum(x) / n`` in Python's arithmetic order (cumsum adds
    left to right, exactly as ``sum()`` does)."""
    values = _numeric(items)
    if values is None:
        return None
    n = len(items)
    return (
        (np.cumsum(values[rows], axis=1)[:, -1] / n).tolist() for rows in resample_indices(n, iters)
    )


def _mean_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    chunks = _sequential_means(items, iters)
    return None if chunks is None else [m for chunk in chunks for m in chunk]


def _perplexity_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    chunks = _sequential_means(items, iters)
    return None if chunks is None else [math.exp(-m) for chunk in chunks for m in chunk]


def _nanmean_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    values = _numeric(items)
    if values is None:
        return None
    out: list[float] = []
    for rows in resample_indices(len(items), iters):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out.extend(np.nanmean(values[rows], axis=1).tolist())
    return out


def _int_pairs(items: Sequence[Any]) -> tuple[IntArray, IntArray] | None:
    """(golds, predictions) as integer arrays when every item is a pair of plain integer
    labels (else ``None``: the generic path calls scikit-learn per replicate)."""
    golds: list[int] = []
    preds: list[int] = []
    for item in items:
        if not isinstance(item, tuple | list) or len(item) != 2:
            return None
        gold, pred = item
        if not (isinstance(gold, int | np.integer) and isinstance(pred, int | np.integer)):
            return None
        golds.append(int(gold))
        preds.append(int(pred))
    return np.asarray(golds, dtype=np.int64), np.asarray(preds, dtype=np.int64)


def _mcc_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    """scikit-learn's Matthews correlation per replicate from confusion counts. Its
    covariances are sums of integer counts (exact in float64 whatever the order), and the
    final division and square root are the same IEEE operations, so the values are
    sklearn's to the bit."""
    pairs = _int_pairs(items)
    if pairs is None:
        return None
    golds, preds = pairs
    labels, codes = np.unique(np.concatenate([golds, preds]), return_inverse=True)
    k = len(labels)
    n = len(items)
    cell = codes[:n] * k + codes[n:]
    out: list[float] = []
    for rows in resample_indices(n, iters):
        r = len(rows)
        offsets = (np.arange(r, dtype=np.int64) * k * k)[:, None]
        counts = np.bincount((offsets + cell[rows]).ravel(), minlength=r * k * k)
        confusion = counts.reshape(r, k, k).astype(np.float64)
        t_sum = confusion.sum(axis=2)
        p_sum = confusion.sum(axis=1)
        n_correct = np.trace(confusion, axis1=1, axis2=2)
        n_samples = p_sum.sum(axis=1)
        cov_ytyp = n_correct * n_samples - (t_sum * p_sum).sum(axis=1)
        cov_ypyp = n_samples**2 - (p_sum * p_sum).sum(axis=1)
        cov_ytyt = n_samples**2 - (t_sum * t_sum).sum(axis=1)
        product = cov_ypyp * cov_ytyt
        with np.errstate(divide="ignore", invalid="ignore"):
            mcc = np.where(product == 0, 0.0, cov_ytyp / np.sqrt(product))
        out.extend(mcc.tolist())
    return out


def _f1_replicates(items: Sequence[Any], iters: int) -> list[float] | None:
    """scikit-learn's binary F1 (positive label 1) per replicate, ``2·tp / (true + pred)``
    (0.0 when both are 0, its zero_division default), computed as sklearn does; only for
    0/1 labels."""
    pairs = _int_pairs(items)
    if pairs is None:
        return None
    golds, preds = pairs
    if not set(np.unique(np.concatenate([golds, preds])).tolist()) <= {0, 1}:
        return None
    n = len(items)
    out: list[float] = []
    for rows in resample_indices(n, iters):
        gold_pos = golds[rows] == 1
        pred_pos = preds[rows] == 1
        tp = (gold_pos & pred_pos).sum(axis=1).astype(np.float64)
        denominator = 1.0 * gold_pos.sum(axis=1).astype(np.float64) + pred_pos.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(denominator == 0, 0.0, (1 + 1.0) * tp / denominator)
        out.extend(f1.tolist())
    return out


Replicates = Callable[[Sequence[Any], int], list[float] | None]
_VECTORISED: dict[str, Replicates] = {
    "mean": _mean_replicates,
    "median": _median_replicates,
    "perplexity": _perplexity_replicates,
    "nanmean": _nanmean_replicates,
    "matthews_corrcoef": _mcc_replicates,
    "f1": _f1_replicates,
}
_VECTORISED_BY_FUNCTION: dict[Callable[..., Any], Replicates] = {
    agg.mean: _mean_replicates,
    agg.median: _median_replicates,
    agg.perplexity: _perplexity_replicates,
    agg.nanmean: _nanmean_replicates,
    agg.matthews_corrcoef: _mcc_replicates,
    agg.f1: _f1_replicates,
}


def bootstrap_stderr(
    statistic: Callable[[list[Any]], Any],
    items: Sequence[Any],
    iters: int,
    *,
    aggregation_name: str | None = None,
) -> float:
    """The sample standard deviation of ``iters`` bootstrap replicates of ``statistic``.

    The built-in mean, median, perplexity, nanmean, matthews_corrcoef and f1 (by
    ``aggregation_name`` or by function) use vectorised replicates where their items allow
    (numbers; integer label pairs): the same values, much faster."""
    replicates: list[float] | None = None
    fast = _VECTORISED.get(aggregation_name or "") or _VECTORISED_BY_FUNCTION.get(statistic)
    if fast is not None:
        replicates = fast(items, iters)
    if replicates is None:
        replicates = bootstrap_replicates(statistic, items, iters)
    return sample_stddev(replicates)


# ----------------------------------------------------------------------------- dispatch


def stderr_for(
    aggregation_name: str,
    items: list[Any],
    *,
    bootstrap_iters: int | None = 100_000,
    metric: str | None = None,
) -> float | None:
    """The stderr lm-eval reports for ``items`` aggregated by ``aggregation_name``; ``None``
    where lm-eval reports ``"N/A"`` (no stderr for that aggregation, one item or fewer,
    ``bootstrap_iters`` of 0/None).

    ``metric`` is the metric's name when it differs from the aggregation's: lm-eval caps the
    bootstrap at 100 iterations for the *metrics* bleu, chrf, chrf++ and ter."""
    if not isinstance(bootstrap_iters, int) or bootstrap_iters <= 0 or len(items) <= 1:
        return None
    if aggregation_name == "mean":
        return mean_stderr(items)
    if aggregation_name == "acc_all":
        return acc_all_stderr(items)
    entry = TASK_AGGREGATIONS.find(aggregation_name)
    if entry is None or not entry.bootstrap:
        return None
    iters = bootstrap_iters
    if (metric or aggregation_name) in CAPPED_METRICS:
        iters = min(iters, CAPPED_ITERS)
    return bootstrap_stderr(entry.fn, items, iters, aggregation_name=entry.name)


# ----------------------------------------------------------------------------- groups


def pooled_sample_stderr(stderrs: Sequence[float], sizes: Sequence[int]) -> float:
    """The stderr of a size-weighted group mean from its subtasks' stderrs (pooled
    variance, lm-eval's formula)."""
    if len(stderrs) != len(sizes):
        raise ValueError(f"{len(stderrs)} stderrs but {len(sizes)} sizes")
    denominator = sum(sizes) - len(sizes)
    if denominator <= 0:
        raise ValueError("pooled stderr needs more documents than subtasks")
    pooled = sum([(n - 1) * s**2 * n for n, s in zip(sizes, stderrs, strict=True)]) / denominator
    return float(np.sqrt(pooled / sum(sizes)))


def unweighted_mean_stderr(stderrs: Sequence[float]) -> float:
    """The stderr of an unweighted mean of subtask means: ``sqrt(Σ se²) / k``."""
    if len(stderrs) == 0:
        raise ValueError("unweighted_mean_stderr needs at least one stderr")
    return float(np.sqrt(sum(s**2 for s in stderrs)) / len(stderrs))
