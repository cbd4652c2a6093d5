"""Calibration statistics with bootstrap CIs over 100,000 labelled items (issue 11).

Workload (synthetic, seeded, shaped like real calibrations):

- ``binary``: 100,000 items, 20 % positive labels (HaluEval's share), judge scores are a
  noisy logistic of the label rounded to 2 decimals (a judge emitting a probability),
  threshold 0.5: the 9 confusion statistics, ROC-AUC, PR-AUC, the best thresholds, ECE.
- ``ordinal``: labels 1-5 (Likert, skewed to the top as SummEval consistency is), judge
  scores 1-5 = label plus rounded noise: Pearson, Spearman, Kendall τ-b, MAE, RMSE,
  quadratic-weighted κ, Krippendorff α interval and ordinal.
- continuous scores (every item its own cell): ``binary`` as above with the scores
  jittered, and ``numeric``: labels 0-5 in steps of 0.2 (STS-B's mean of raters) against
  continuous judge scores, and ``numeric`` with both sides continuous (labels jittered:
  a mean of many raters), where Kendall τ-b counts weighted inversions and Spearman works
  from cumulative weights (issue 26; the 26-level case counts inversions in one level).
- ``pairwise``: verdicts A/B/tie in both orders; ``self-consistency``: 3 repeats per item.
- ``ppi_mean`` and ``disagreements``.

Every statistic with ``--resamples`` (default 1,000) bootstrap resamples. Prints wall and
CPU seconds of each public call, the CPU seconds per group of statistics (statistics
sharing intermediate sums are timed together; "(resampling)" is drawing the resamples)
and the totals. Goal: total under 5 s on the 2-core machine. CPU seconds are the stable
figure when other work shares the cores.

The rank statistics of continuous scores run compiled (numba, ``statistics.compiled``)
when numba is installed. Their one-off costs are printed apart and kept out of the
timed rows: compiling the kernels (once per install: the machine code is cached; measured
in a child process with an empty cache) and, in every process, importing numba and
loading the cached code (a warm-up call before the timed rows). ``--numpy`` runs the
numpy path instead (``ASSAY_CALIBRATION_NUMPY=1``), for the A/B.

Run: ``.venv/bin/python benchmarks/calibration_stats.py [--items 100000] [--resamples 1000]
[--continuous-only] [--numpy]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

# One BLAS thread: the 2 cores are shared, and a multi-threaded BLAS under load swings
# tenfold between runs (set these yourself to measure otherwise). Before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
if "--numpy" in sys.argv:
    os.environ["ASSAY_CALIBRATION_NUMPY"] = "1"

import numpy as np

from assay.calibration.statistics import (
    compiled,
    disagreements,
    ppi_mean,
    self_consistency,
)
from assay.calibration.statistics import statistics as calibration
from assay.calibration.statistics.resample import cells_of, run_bootstrap

WARM_UP = """
import time
t = time.process_time()
import numpy as np
from assay.calibration.statistics import calibration_statistics
rng = np.random.default_rng(0)
labels = rng.integers(0, 2, 400)
scores = rng.random(400)
calibration_statistics("binary", labels, scores, threshold=0.5, n_resamples=2)
calibration_statistics("numeric", labels + rng.random(400), scores, n_resamples=2)
calibration_statistics("numeric", np.round(scores * 5), scores, n_resamples=2)
print(time.process_time() - t)
"""
"""Every compiled kernel on small data (binary, numeric with both sides continuous and
with few label values): its CPU time in a fresh process is import + compile or load."""


def one_off_costs() -> list[Row]:
    """(compile once per install, import + load in every process) CPU seconds, each from
    a child process running ``WARM_UP`` (with an empty numba cache, then a warm one),
    less the same child on the numpy path (importing numpy, scipy and assay)."""

    def child(env: dict[str, str]) -> float:
        done = subprocess.run(
            [sys.executable, "-c", WARM_UP],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        return float(done.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as cache:
        cold = child({"NUMBA_CACHE_DIR": cache})
        warm = child({"NUMBA_CACHE_DIR": cache})
    numpy_only = child({"ASSAY_CALIBRATION_NUMPY": "1"})
    return [
        ("compiled kernels: once per install (compile)", None, cold - numpy_only),
        ("compiled kernels: once per process (import numba + load)", None, warm - numpy_only),
    ]


def binary_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    labels = (rng.random(n) < 0.2).astype(np.int64)
    logits = -1.5 + 3.0 * labels + rng.normal(0.0, 1.3, n)
    scores = np.round(1.0 / (1.0 + np.exp(-logits)), 2)
    return labels, scores


def ordinal_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n, p=[0.05, 0.07, 0.1, 0.18, 0.6])
    scores = np.clip(labels + np.round(rng.normal(0.0, 0.9, n)), 1.0, 5.0)
    return labels, scores


def numeric_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    labels = np.round(rng.uniform(0.0, 5.0, n) * 5.0) / 5.0
    scores = np.clip(labels / 5.0 + rng.normal(0.0, 0.2, n), 0.0, 1.0) * 5.0
    return labels, scores


def pairwise_data(rng: np.random.Generator, n: int) -> tuple[list[str], list[tuple[str, str]]]:
    human = rng.choice(["A", "B"], size=n)
    other = {"A": "B", "B": "A"}
    right = rng.random(n) < 0.75
    first = [h if ok else other[h] for h, ok in zip(human, right, strict=True)]
    biased = rng.random(n) < 0.15
    second = ["A" if b else f for f, b in zip(first, biased, strict=True)]
    return [str(h) for h in human], list(zip(first, second, strict=True))


Row = tuple[str, float | None, float]
"""(label, wall seconds or None, CPU seconds)."""


def timed(call: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def group_times(
    kind: calibration.Kind,
    labels: object,
    scores: object,
    threshold: float | None,
    resamples: int,
    skip: tuple[str, ...] = (),
) -> tuple[dict[str, float], int]:
    """CPU seconds per group of statistics (the bootstrap ``calibration_statistics``
    runs, without ``skip``) and the number of cells resampled."""
    given = calibration._validated(kind, labels, scores, threshold, "scores")  # type: ignore[arg-type]
    cells, counts = calibration._ordered_cells(kind, *cells_of(np.column_stack(given.columns)))
    plan = calibration._plan(kind, [cells[:, j] for j in range(cells.shape[1])], given.threshold)
    groups = {k: g for k, g in plan.groups.items() if k not in skip}
    return run_bootstrap(groups, counts, n_resamples=resamples, seed=0).timings, int(cells.shape[0])


def kind_rows(
    kind: calibration.Kind, labels: object, scores: object, threshold: float | None, resamples: int
) -> tuple[list[Row], float, float]:
    wall, cpu = timed(
        lambda: calibration.calibration_statistics(
            kind,
            labels,  # type: ignore[arg-type]
            scores,  # type: ignore[arg-type]
            threshold=threshold,
            n_resamples=resamples,
            seed=0,
        )
    )
    timings, n_cells = group_times(kind, labels, scores, threshold, resamples)
    rows: list[Row] = [(f"calibration_statistics({kind!r}), {n_cells:,} cells", wall, cpu)]
    rows.extend((f"  {group}", None, seconds) for group, seconds in timings.items())
    return rows, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--continuous-only", action="store_true", help="only the continuous-score kinds"
    )
    parser.add_argument(
        "--numpy", action="store_true", help="the numpy path, not the compiled kernels"
    )
    args = parser.parse_args()
    n, resamples = args.items, args.resamples
    rng = np.random.default_rng(20261124)
    rows: list[Row] = []
    total_wall = total_cpu = 0.0
    path = "compiled (numba)" if compiled.enabled(None) else "numpy"
    print(f"{n:,} items, {resamples:,} bootstrap resamples; per-group times are CPU seconds")
    print(f"rank statistics of continuous scores: {path}\n")
    if compiled.enabled(None):
        rows.extend(one_off_costs())
        # this process's import + load, outside the timed rows
        warm = np.random.default_rng(0)
        calibration.calibration_statistics(
            "numeric", warm.random(300), warm.random(300), n_resamples=2
        )
        calibration.calibration_statistics(
            "binary", warm.integers(0, 2, 300), warm.random(300), threshold=0.5, n_resamples=2
        )

    if not args.continuous_only:
        for kind, (labels, scores), threshold in (
            ("binary", binary_data(rng, n), 0.5),
            ("ordinal", ordinal_data(rng, n), None),
            ("pairwise", pairwise_data(rng, n), None),
        ):
            more, wall, cpu = kind_rows(kind, labels, scores, threshold, resamples)  # type: ignore[arg-type]
            rows.extend(more)
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu

        repeats = np.clip(
            np.repeat(rng.integers(1, 6, n)[:, None], 3, axis=1) + rng.integers(-1, 2, (n, 3)), 1, 5
        ).astype(np.float64)
        labels, scores = binary_data(rng, n)
        labelled = rng.choice(n, size=n // 20, replace=False)
        for name, call in (
            (
                "self_consistency (3 repeats)",
                lambda: self_consistency(repeats, threshold=3.5, n_resamples=resamples, seed=0),
            ),
            (
                "ppi_mean (5 % labelled)",
                lambda: ppi_mean(scores, scores[labelled], labels[labelled].astype(np.float64)),
            ),
            (
                "disagreements",
                lambda: disagreements(labels.astype(np.float64), scores, threshold=0.5),
            ),
        ):
            wall, cpu = timed(call)
            rows.append((name, wall, cpu))
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        rows.append(("TOTAL, discrete scores (goal < 5 s)", total_wall, total_cpu))

    # Continuous scores: every item its own cell, resampled item by item (own seed, so
    # --continuous-only measures the same data).
    rng = np.random.default_rng(20261126)
    labels, scores = binary_data(rng, n)
    scores = np.clip(scores + rng.uniform(-0.005, 0.005, n), 0.0, 1.0)
    more, _, _ = kind_rows("binary", labels, scores, 0.5, resamples)
    rows.append(("continuous scores:", None, 0.0))
    rows.extend(more)
    labels, scores = numeric_data(rng, n)
    more, _, _ = kind_rows("numeric", labels, scores, None, resamples)
    rows.extend(more)
    # Both sides continuous: Kendall τ-b by weighted inversions, no table or level pairs.
    labels = labels + rng.normal(0.0, 0.05, n)
    more, _, _ = kind_rows("numeric", labels, scores, None, resamples)
    rows.append(("both sides continuous:", None, 0.0))
    rows.extend(more)

    width = max(len(name) for name, _, _ in rows)
    print(f"{'':<{width}}  {'wall s':>8}  {'CPU s':>8}")
    for name, wall, cpu in rows:
        shown = "" if wall is None else f"{wall:8.3f}"
        print(f"{name:<{width}}  {shown:>8}  {cpu:8.3f}")


if __name__ == "__main__":
    main()
