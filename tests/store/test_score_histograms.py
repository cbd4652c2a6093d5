"""Per-scorer score histograms counted in SQL (the run page's distributions, issue 25)."""

from __future__ import annotations

import math

import pytest

from assay.store import Store
from assay.types import RunInfo, TargetSpec
from tests.store.factories import error_score, item_result, not_scorable, ready_score


def _run(store: Store, run_id: str, acc: list[float], other: list[float] | None = None) -> None:
    store.runs.create(RunInfo(id=run_id, target=TargetSpec(kind="stored-output", label="s")))
    results = []
    for k, value in enumerate(acc):
        scores = {"acc": ready_score("acc", value)}
        if other is not None and k < len(other):
            scores["len"] = ready_score("len", other[k])
        results.append(item_result(f"i{k}", k, scores=scores))
    results.append(item_result("err", len(acc), scores={"acc": error_score("acc")}))
    results.append(item_result("ns", len(acc) + 1, scores={"acc": not_scorable("acc")}))
    store.runs.write_results(run_id, results)


def test_bins_over_the_declared_range_count_only_ready_scores(store: Store) -> None:
    _run(store, "r1", [0.0, 0.05, 0.1, 0.55, 0.999, 1.0, 1.0, -0.2, 1.7])
    _run(store, "r2", [0.5] * 5)  # another run's scores never count
    counted = store.score_histograms.histogram("r1", "acc", low=0.0, high=1.0, bins=4)
    assert counted.edges == [0.0, 0.25, 0.5, 0.75, 1.0]
    # 0.1 and 0.05 and 0.0 and -0.2 (below: first bin); 0.55; 0.999, 1.0, 1.0, 1.7 (top bin)
    assert counted.counts == [4, 0, 1, 4]
    assert counted.total == 9


def test_an_unbounded_range_uses_the_stored_min_and_max(store: Store) -> None:
    _run(store, "r1", [0.0, 0.0, 0.0], other=[3.0, 7.0, 11.0])
    counted = store.score_histograms.histogram("r1", "len", low=0.0, high=math.inf, bins=2)
    assert counted.edges == [3.0, 7.0, 11.0] and counted.counts == [1, 2]
    same = [5.0, 5.0]
    _run(store, "r2", [0.0, 0.0], other=same)
    flat = store.score_histograms.histogram("r2", "len", low=math.nan, high=math.nan, bins=2)
    assert flat.edges == [4.5, 5.0, 5.5] and flat.counts == [0, 2]


def test_a_scorer_without_numbers_has_an_empty_histogram(store: Store) -> None:
    _run(store, "r1", [0.5])
    for low, high in [(0.0, 1.0), (0.0, math.inf)]:
        empty = store.score_histograms.histogram("r1", "missing", low=low, high=high)
        assert (empty.edges, empty.counts) == ([], [])


@pytest.mark.parametrize("bins", [0, 1, 51])
def test_bins_out_of_bounds_are_refused(store: Store, bins: int) -> None:
    with pytest.raises(ValueError, match="bins must be from 2 to 50"):
        store.score_histograms.histogram("r1", "acc", low=0.0, high=1.0, bins=bins)


def test_a_score_on_an_edge_starts_the_bin_above(store: Store) -> None:
    _run(store, "r1", [0.3, 0.6, 0.7, 0.29999])
    counted = store.score_histograms.histogram("r1", "acc", low=0.0, high=1.0, bins=10)
    assert counted.edges[3] == 0.3 and counted.edges[7] == 0.7
    assert counted.counts == [0, 0, 1, 1, 0, 0, 1, 1, 0, 0]


def test_scorers_sharing_a_range_are_counted_together_and_apart(store: Store) -> None:
    _run(store, "r1", [0.1, 0.9, 0.95], other=[2.0, 4.0])
    both = store.score_histograms.histograms(
        "r1", {"acc": (0.0, 1.0), "len": (0.0, math.inf), "none": (0.0, 1.0)}, bins=2
    )
    assert both["acc"].edges == [0.0, 0.5, 1.0] and both["acc"].counts == [1, 2]
    assert both["len"].edges == [2.0, 3.0, 4.0] and both["len"].counts == [1, 1]
    assert (both["none"].edges, both["none"].counts) == ([], [])
    same_range = store.score_histograms.histograms(
        "r1", {"acc": (0.0, 4.0), "len": (0.0, 4.0)}, bins=2
    )
    assert same_range["acc"].counts == [3, 0] and same_range["len"].counts == [
        0,
        2,
    ]  # 2.0 starts bin 1


@pytest.mark.parametrize(
    ("low", "high", "bins"),
    [(0.0, 1.0, 4), (0.0, 1.0, 10), (0.0, math.inf, 3), (math.nan, math.nan, 7), (0.3, 0.6, 2)],
)
def test_one_result_per_item_counts_from_the_stored_means(
    store: Store, low: float, high: float, bins: int
) -> None:
    """A run with one result per item is counted from its stored means: the very counts
    and edges the scores give (edges, out-of-range values, errors, not-scorable, other
    runs and scorers all included)."""
    values = [0.0, 0.05, 0.1, 0.3, 0.45, 0.55, 0.6, 0.999, 1.0, 1.0, -0.2, 1.7]
    _run(store, "r1", values, other=[3.0, 7.0, 0.5])
    _run(store, "r2", [0.5] * 5, other=[0.25])
    ranges = {"acc": (low, high), "len": (low, high), "missing": (low, high)}
    means = store.score_histograms.histograms("r1", ranges, bins=bins, single_repeat=True)
    counted = store.score_histograms.histograms("r1", ranges, bins=bins)
    assert means == counted
    assert means["acc"].total == len(values) and means["len"].total == 3
    assert means["missing"].counts == []
