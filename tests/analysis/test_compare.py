from __future__ import annotations

import numpy as np
import pytest

from assay.analysis.compare import ScorerComparison, compare_runs, top_items
from assay.summary.stats import bootstrap_mean_ci
from assay.types import ScoreRow

from .factories import record, rows, spec


def test_known_deltas_means_and_paired_ci() -> None:
    a_rows = rows({"x": [0.2], "y": [0.5], "z": [0.9], "w": [0.4]})
    b_rows = rows({"x": [0.4], "y": [0.5], "z": [0.6], "w": [1.0]})
    cmp = compare_runs(record("A"), a_rows, record("B"), b_rows)
    (s,) = cmp.scorers
    deltas = np.array([0.2, 0.0, -0.3, 0.6])
    assert s.n_paired == 4 and s.n_a == 4 and s.n_b == 4
    assert s.mean_a == pytest.approx(0.5) and s.mean_b == pytest.approx(0.625)
    assert s.delta == pytest.approx(deltas.mean())
    assert (s.ci_low, s.ci_high) == pytest.approx(bootstrap_mean_ci(deltas, n_boot=2000, seed=0))
    assert s.ci_low is not None and s.ci_high is not None
    assert s.ci_low <= s.delta <= s.ci_high
    assert compare_runs(record("A"), a_rows, record("B"), b_rows) == cmp  # deterministic
    assert [d.item_id for d in s.regressed] == ["z"]
    assert [d.item_id for d in s.improved] == ["w", "x"]  # best first
    z = s.regressed[0]
    assert (z.score_a, z.score_b, z.delta) == (0.9, 0.6, pytest.approx(-0.3))
    assert cmp.warnings == [] and cmp.items_in_both == 4


def test_regressions_worst_first_and_threshold() -> None:
    a_rows = rows({"a": [1.0], "b": [1.0], "c": [1.0], "d": [1.0]})
    b_rows = rows({"a": [0.95], "b": [0.2], "c": [0.6], "d": [0.6]})
    cmp = compare_runs(record("A"), a_rows, record("B"), b_rows, threshold=0.1)
    (s,) = cmp.scorers
    # 0.05 drop is within the threshold; c and d tie and keep run-A order
    assert [d.item_id for d in s.regressed] == ["b", "c", "d"]
    assert s.improved == []
    capped = compare_runs(record("A"), a_rows, record("B"), b_rows, threshold=0.1, max_items=1)
    assert [d.item_id for d in capped.scorers[0].regressed] == ["b"]
    # the counts are of every item, whatever the lists hold
    assert (s.n_regressed, s.n_improved, capped.scorers[0].n_regressed) == (3, 0, 3)
    bare = capped.without_item_lists().scorers[0]
    assert (bare.regressed, bare.n_regressed, bare.mean_b) == ([], 3, s.mean_b)
    # a comparison stored before the counts existed reads them from its lists
    old = s.model_dump(exclude={"n_regressed", "n_improved"})
    assert ScorerComparison.model_validate(old).n_regressed == 3


def test_repeats_are_averaged_before_pairing() -> None:
    a_rows = rows({"x": [0.0, 1.0], "y": [1.0, None]})  # means 0.5, 1.0
    b_rows = rows({"x": [1.0], "y": [0.5, 0.5]})
    (s,) = compare_runs(record("A"), a_rows, record("B"), b_rows).scorers
    assert s.mean_a == pytest.approx(0.75) and s.mean_b == pytest.approx(0.75)
    assert {d.item_id: d.delta for d in s.regressed + s.improved} == {
        "x": pytest.approx(0.5),
        "y": pytest.approx(-0.5),
    }


def test_lower_is_better_direction() -> None:
    scorers = [spec("tox", higher_is_better=False)]
    a_rows = rows({"x": [0.1], "y": [0.5]}, scorer_id="tox")
    b_rows = rows({"x": [0.4], "y": [0.2]}, scorer_id="tox")
    cmp = compare_runs(record("A", scorers=scorers), a_rows, record("B", scorers=scorers), b_rows)
    (s,) = cmp.scorers
    assert s.higher_is_better is False
    assert [d.item_id for d in s.regressed] == ["x"]  # toxicity went up
    assert [d.item_id for d in s.improved] == ["y"]


def test_paired_ci_detects_a_small_consistent_gain() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(300)  # large spread between items
    gain = 0.02 + rng.normal(0, 0.005, 300)  # small, consistent per item
    ids = [f"i{k}" for k in range(300)]
    a_rows = rows({i: [float(v)] for i, v in zip(ids, base, strict=True)})
    b_rows = rows({i: [float(v)] for i, v in zip(ids, base + gain, strict=True)})
    (s,) = compare_runs(record("A"), a_rows, record("B"), b_rows).scorers
    assert s.verdict == "improved" and s.ci_low is not None and s.ci_low > 0
    # the unpaired CIs overlap: only pairing sees the difference
    ca = bootstrap_mean_ci(base, seed=0)
    cb = bootstrap_mean_ci(base + gain, seed=0)
    assert ca is not None and cb is not None and cb[0] < ca[1]
    scorers = [spec(higher_is_better=False)]
    (low,) = compare_runs(
        record("A", scorers=scorers), a_rows, record("B", scorers=scorers), b_rows
    ).scorers
    assert low.verdict == "regressed"


def test_items_and_scorers_in_one_run_only() -> None:
    a_rows = rows({"k": [1.0], "a1": [1.0], "a2": [0.0]}, order=["a2", "k", "a1"])
    b_rows = [*rows({"b1": [1.0], "k": [0.5]}), ScoreRow("k", 1, 0, "len", "ready", 3.0)]
    a = record("A", scorers=[spec("acc"), spec("old")])
    b = record("B", scorers=[spec("acc"), spec("len")])
    cmp = compare_runs(a, a_rows, b, b_rows)
    assert cmp.only_in_a == ["a2", "a1"]  # run-A order
    assert cmp.only_in_b == ["b1"]
    assert [s.scorer_id for s in cmp.scorers] == ["acc"]
    assert cmp.scorers_only_in_a == ["old"] and cmp.scorers_only_in_b == ["len"]
    assert cmp.scorers[0].n_paired == 1 and cmp.scorers[0].n_a == 3
    assert cmp.scorers[0].ci_low is None and cmp.scorers[0].verdict == "insufficient_data"


def test_an_item_that_errored_in_b_is_not_paired() -> None:
    a_rows = rows({"x": [1.0], "y": [1.0], "z": [0.0]})
    b_rows = rows({"x": [1.0], "y": [None], "z": [1.0]})
    (s,) = compare_runs(record("A"), a_rows, record("B"), b_rows).scorers
    assert s.n_paired == 2 and s.n_b == 2
    assert s.mean_a == pytest.approx(0.5) and s.delta == pytest.approx(0.5)
    assert s.regressed == []


def test_warnings() -> None:
    r = rows({"x": [1.0]})
    version = compare_runs(record("A", version=1), r, record("B", version=2), r)
    assert len(version.warnings) == 1 and "version" in version.warnings[0]
    other = compare_runs(record("A", dataset="qa"), r, record("B", dataset="chat"), r)
    assert "different data" in other.warnings[0]
    disjoint = compare_runs(record("A"), r, record("B"), rows({"y": [1.0]}))
    assert any("no items in common" in w for w in disjoint.warnings)
    assert disjoint.scorers[0].n_paired == 0 and disjoint.scorers[0].delta is None
    empty = compare_runs(record("A"), r, record("B"), [])
    assert any("run B has no scores" in w for w in empty.warnings)
    flipped = compare_runs(record("A"), r, record("B", scorers=[spec(higher_is_better=False)]), r)
    assert any("direction" in w for w in flipped.warnings)


def test_top_items_round_robin_across_scorers() -> None:
    a_rows = rows({f"i{k}": [1.0] for k in range(5)}) + rows(
        {f"i{k}": [1.0] for k in range(5)}, scorer_id="f1"
    )
    b_rows = rows({f"i{k}": [1.0 - 0.1 * (k + 1)] for k in range(5)}) + rows(
        {"i0": [0.5]} | {f"i{k}": [1.0] for k in range(1, 5)}, scorer_id="f1"
    )
    scorers = [spec("acc"), spec("f1")]
    cmp = compare_runs(record("A", scorers=scorers), a_rows, record("B", scorers=scorers), b_rows)
    picked = top_items(cmp, 3)
    assert [(s.scorer_id, d.item_id) for s, d in picked] == [
        ("acc", "i4"),
        ("acc", "i3"),
        ("f1", "i0"),
    ]
    assert cmp.scorers[0].verdict == "regressed" and cmp.has_regression
    assert top_items(cmp, 3, which="improved") == []
