"""Scorer statistics streamed in chunks (``assay.summary.streaming``): the same numbers
whatever the chunking, the order the results arrived in, or the path (memory or store)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.summary import bootstrap
from assay.summary.columns import ScoreColumns, ScoreColumnsBuilder
from assay.summary.streaming import (
    group_items,
    item_means,
    scorer_numbers,
    sorted_columns,
    whole_items,
)


def _columns(rows: list[tuple[int, int, str, float | None]]) -> ScoreColumns:
    builder = ScoreColumnsBuilder()
    for position, repeat, status, value in rows:
        builder.add("s", position, repeat, status, value)  # type: ignore[arg-type]
    return builder.columns("s")


def _chunks(cols: ScoreColumns, size: int) -> list[ScoreColumns]:
    return [
        ScoreColumns(
            position=cols.position[i : i + size],
            repeat=cols.repeat[i : i + size],
            value=cols.value[i : i + size],
            status=cols.status[i : i + size],
        )
        for i in range(0, len(cols), size)
    ]


def _runs(n: int, repeats: int, seed: int, *, discrete: bool) -> ScoreColumns:
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, str, float | None]] = []
    for position in range(n):
        for repeat in range(repeats):
            status = "error" if rng.random() < 0.05 else "ready"
            value = float(rng.integers(0, 2)) if discrete else float(rng.random())
            rows.append((position, repeat, status, value if status == "ready" else None))
    order = rng.permutation(len(rows))  # results finish in any order
    return _columns([rows[i] for i in order])


@pytest.mark.parametrize("discrete", [True, False])
@pytest.mark.parametrize("repeats", [1, 3])
def test_numbers_do_not_depend_on_chunking_or_arrival_order(discrete: bool, repeats: int) -> None:
    cols = sorted_columns(_runs(700, repeats, seed=repeats, discrete=discrete))
    whole = scorer_numbers(lambda: (cols,), threshold=0.5, keep_means=True)
    for size in (1, 2, 5, 64, 699):
        chunked = scorer_numbers(lambda size=size: _chunks(cols, size), threshold=0.5)
        for field in ("count", "mean", "stderr", "ci", "min", "max", "errors", "passing"):
            assert getattr(chunked, field) == getattr(whole, field), (size, field)
        assert chunked.flipped_positions == whole.flipped_positions
        assert chunked.mean_spread == whole.mean_spread
    assert whole.means is not None and whole.means.shape[0] == whole.count
    assert whole.mean == pytest.approx(float(whole.means.mean()), rel=1e-12)
    assert whole.errors == int(np.count_nonzero(cols.status == 2))


def test_discrete_scores_use_counts_and_continuous_ones_index_draws() -> None:
    discrete = sorted_columns(_runs(400, 1, seed=1, discrete=True))
    numbers = scorer_numbers(lambda: (discrete,))
    means = item_means(lambda: (discrete,))
    assert numbers.ci == bootstrap.bootstrap_mean_ci(means)
    values, counts = np.unique(means, return_counts=True)
    assert numbers.ci == bootstrap.counts_ci(values, counts)
    continuous = sorted_columns(_runs(400, 1, seed=2, discrete=False))
    numbers = scorer_numbers(lambda: (continuous,))
    means = item_means(lambda: (continuous,))
    assert numbers.ci == bootstrap.indices_ci(means) == bootstrap.bootstrap_mean_ci(means)
    assert numbers.means is None  # not kept unless asked for


def test_more_distinct_numbers_than_the_histogram_keeps_are_continuous(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import assay.summary.streaming as streaming

    monkeypatch.setattr(bootstrap, "HISTOGRAM_MAX_NUMBERS", 3)
    monkeypatch.setattr(streaming, "HISTOGRAM_MAX_NUMBERS", 3)
    values = np.arange(400, dtype=np.float64) % 5  # 5 numbers: counts by ratio, not by cap
    cols = ScoreColumns(
        position=np.arange(400, dtype=np.int64),
        repeat=np.zeros(400, dtype=np.int32),
        value=values,
        status=np.zeros(400, dtype=np.int8),
    )
    numbers = scorer_numbers(lambda: _chunks(cols, 50))
    assert numbers.ci == bootstrap.indices_ci(values) == bootstrap.bootstrap_mean_ci(values)


def test_whole_items_never_split_an_items_repeats() -> None:
    cols = sorted_columns(_runs(50, 4, seed=3, discrete=True))
    pieces = list(whole_items(_chunks(cols, 3)))
    assert sum(len(p) for p in pieces) == len(cols)
    seen: set[int] = set()
    for piece in pieces:
        positions = set(piece.position.tolist())
        assert not positions & seen
        seen |= positions


def test_grouping_means_flips_and_spread() -> None:
    cols = sorted_columns(
        _columns(
            [
                (0, 0, "ready", 1.0),
                (0, 1, "ready", 0.0),
                (1, 0, "ready", 0.25),
                (1, 1, "error", None),
                (2, 0, "not_scorable", None),
                (3, 0, "ready", -0.0),
            ]
        )
    )
    groups = group_items(cols, threshold=0.5, higher_is_better=True)
    assert groups.position.tolist() == [0, 1, 3]
    assert groups.mean.tolist() == [0.5, 0.25, 0.0] and str(groups.mean[2]) == "0.0"
    assert groups.n is not None and groups.n.tolist() == [2, 1, 1]
    assert groups.passes is not None and groups.passes.tolist() == [1, 0, 0]
    assert groups.errors == 1 and groups.not_scorable == 1
    numbers = scorer_numbers(lambda: (cols,), threshold=0.5)
    assert numbers.flipped_positions == [0] and numbers.mean_spread == 1.0
    assert numbers.passing == 1 and numbers.count == 3


def test_no_ready_results_give_no_numbers() -> None:
    cols = _columns([(0, 0, "error", None), (1, 0, "not_scorable", None)])
    numbers = scorer_numbers(lambda: (sorted_columns(cols),), threshold=0.5)
    assert numbers.count == 0 and numbers.mean is None and numbers.ci is None
    assert numbers.errors == 1 and numbers.not_scorable == 1
