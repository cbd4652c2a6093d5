"""The bootstrap draws: item indices or exact multinomial cell counts, the same bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from assay.calibration.statistics.resample import (
    FloatArray,
    Groups,
    StatGroup,
    cells_of,
    resample_weights,
    run_bootstrap,
)


def test_item_weights_are_reproducible_counts() -> None:
    first = np.vstack(list(resample_weights(np.ones(50), 30, seed=4)))
    again = np.vstack(list(resample_weights(np.ones(50), 30, seed=4)))
    other = np.vstack(list(resample_weights(np.ones(50), 30, seed=5)))
    assert first.shape == (30, 50)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.all(first.sum(axis=1) == 50)
    assert np.all(first == np.round(first))


def test_cells_and_items_give_the_same_bootstrap_distribution() -> None:
    """A statistic's bootstrap spread is the same whether items or cell counts are drawn."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, 4000).astype(np.float64)
    cells, counts = cells_of(values[:, None])
    assert cells.shape[0] == 4 and counts.sum() == 4000

    def mean_of(column: FloatArray) -> dict[str, StatGroup]:
        return {"mean": lambda w: {"mean": (w @ column) / w.sum(axis=1)}}

    by_cells = run_bootstrap(mean_of(cells[:, 0]), counts, n_resamples=2000, seed=1)
    by_items = run_bootstrap(mean_of(values), np.ones(4000), n_resamples=2000, seed=1)
    assert by_cells.point["mean"] == pytest.approx(by_items.point["mean"])
    expected_sd = values.std() / np.sqrt(values.shape[0])
    assert by_cells.replicates["mean"].std() == pytest.approx(expected_sd, rel=0.08)
    assert by_items.replicates["mean"].std() == pytest.approx(expected_sd, rel=0.08)


def test_continuous_values_stay_one_cell_per_item() -> None:
    values = np.random.default_rng(0).random((100, 2))
    cells, counts = cells_of(values)
    assert cells is values and np.all(counts == 1.0)
    with pytest.raises(ValueError, match="one item per cell"):
        next(resample_weights(np.array([2.0, 1.0, 1.0]), 3, seed=0))


@pytest.mark.parametrize(
    "values", [[3.0, 1.0, 3.0, 2.0], [1.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]]
)
def test_groups_sum_and_expand_in_every_layout(values: list[float]) -> None:
    column = np.array(values)
    groups = Groups(column)
    weights = np.array([[1.0, 2.0, 0.0, 1.0], [0.0, 1.0, 3.0, 0.0]])
    sums = groups.sums(weights)
    for g, value in enumerate(np.unique(column)):
        assert np.array_equal(sums[:, g], weights[:, column == value].sum(axis=1))
    expanded = groups.expand(sums)
    for i, value in enumerate(column):
        g = int(np.flatnonzero(np.unique(column) == value)[0])
        assert np.array_equal(expanded[:, i], sums[:, g])
