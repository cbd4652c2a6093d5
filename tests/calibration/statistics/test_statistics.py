"""The entry points: bootstrap CIs, JSON shape, paired differences."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.calibration.statistics import (
    STATISTICS,
    calibration_statistics,
    paired_difference,
)
from tests.calibration.statistics.conftest import Labelled


def both_kinds(feedbackqa: Labelled, stsb: Labelled) -> list[tuple[str, Labelled, float | None]]:
    return [("binary", feedbackqa, 0.3), ("numeric", stsb, None)]


def test_every_ci_contains_its_point_estimate(feedbackqa: Labelled, stsb_rounded: Labelled) -> None:
    for kind, data, threshold in (("binary", feedbackqa, 0.3), ("ordinal", stsb_rounded, None)):
        stats = calibration_statistics(kind, data.labels, data.scores, threshold=threshold)  # type: ignore[arg-type]
        assert set(stats.names()) == set(STATISTICS[kind])
        assert stats.undefined == {}, stats.undefined
        for name, estimate in stats.statistics.items():
            assert estimate.ci_low <= estimate.value <= estimate.ci_high, name
            assert estimate.ci_low < estimate.ci_high, name
            assert estimate.n == data.labels.shape[0]


def test_seeded_cis_are_reproducible_and_differ_across_seeds(
    feedbackqa: Labelled, stsb: Labelled
) -> None:
    for kind, data, threshold in both_kinds(feedbackqa, stsb):
        first = calibration_statistics(kind, data.labels, data.scores, threshold=threshold, seed=7)  # type: ignore[arg-type]
        again = calibration_statistics(kind, data.labels, data.scores, threshold=threshold, seed=7)  # type: ignore[arg-type]
        other = calibration_statistics(kind, data.labels, data.scores, threshold=threshold, seed=8)  # type: ignore[arg-type]
        assert first.to_json() == again.to_json()
        for name, estimate in first.statistics.items():
            assert other.statistics[name].value == estimate.value
        differing = [
            name
            for name, estimate in first.statistics.items()
            if (other.statistics[name].ci_low, other.statistics[name].ci_high)
            != (estimate.ci_low, estimate.ci_high)
        ]
        assert len(differing) >= len(first.statistics) - 2, kind


def test_cis_narrow_with_more_items(feedbackqa: Labelled, stsb: Labelled) -> None:
    for kind, data, threshold in both_kinds(feedbackqa, stsb):
        small = calibration_statistics(
            kind, data.labels[:75], data.scores[:75], threshold=threshold
        )  # type: ignore[arg-type]
        full = calibration_statistics(kind, data.labels, data.scores, threshold=threshold)  # type: ignore[arg-type]
        names = (
            ["accuracy", "kappa", "roc_auc", "f1"]
            if kind == "binary"
            else ["pearson", "spearman", "kendall_tau_b", "mae"]
        )
        for name in names:
            wide, narrow = small[name], full[name]
            assert wide is not None and narrow is not None
            assert narrow.ci_high - narrow.ci_low < wide.ci_high - wide.ci_low, name


def test_no_resamples_collapses_the_interval(stsb: Labelled) -> None:
    stats = calibration_statistics("numeric", stsb.labels, stsb.scores, n_resamples=0)
    pearson = stats["pearson"]
    assert pearson is not None and pearson.ci_low == pearson.value == pearson.ci_high
    with pytest.raises(ValueError, match="n_resamples"):
        calibration_statistics("numeric", stsb.labels, stsb.scores, n_resamples=-1)


def test_too_few_items_for_a_ci_gives_a_reason() -> None:
    """Three items, one positive: most resamples have no positive label."""
    stats = calibration_statistics(
        "binary", [1, 0, 0], [0.9, 0.2, 0.4], threshold=0.5, n_resamples=200
    )
    assert stats["recall"] is None
    assert "resamples" in (stats.reason("recall") or "")
    assert stats["accuracy"] is not None


def test_to_json_shape(feedbackqa: Labelled) -> None:
    stats = calibration_statistics(
        "binary", feedbackqa.labels, feedbackqa.scores, threshold=0.3, n_resamples=50
    )
    as_json = json.loads(json.dumps(stats.to_json()))
    assert set(as_json) == set(STATISTICS["binary"])
    assert as_json["kappa"] == {
        "value": stats["kappa"].value,  # type: ignore[union-attr]
        "ci_low": stats["kappa"].ci_low,  # type: ignore[union-attr]
        "ci_high": stats["kappa"].ci_high,  # type: ignore[union-attr]
        "n": 300,
    }
    full = json.loads(stats.model_dump_json())
    assert full["confusion_matrix"]["tp"] == stats.confusion_matrix.tp  # type: ignore[union-attr]
    assert len(full["reliability_curve"]["bins"]) == 10
    with pytest.raises(KeyError, match="spearman"):
        stats["spearman"]
    assert stats.get("spearman") is None


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="kind is 'likert'"):
        calibration_statistics("likert", [1.0], [1.0])  # type: ignore[arg-type]


def test_paired_difference_of_a_scorer_with_itself_is_exactly_zero(feedbackqa: Labelled) -> None:
    diff = paired_difference(
        "binary", feedbackqa.labels, feedbackqa.scores, feedbackqa.scores, threshold=0.3
    )
    assert diff.statistics
    for name, estimate in diff.statistics.items():
        assert (estimate.value, estimate.ci_low, estimate.ci_high) == (0.0, 0.0, 0.0), name


def test_paired_difference_values_and_pairing(stsb: Labelled) -> None:
    rng = np.random.default_rng(0)
    better = stsb.scores
    worse = stsb.scores + rng.normal(0.0, 1.0, stsb.scores.shape[0])
    diff = paired_difference("numeric", stsb.labels, better, worse, n_resamples=500, seed=1)
    a = calibration_statistics("numeric", stsb.labels, better, n_resamples=500, seed=1)
    b = calibration_statistics("numeric", stsb.labels, worse, n_resamples=500, seed=2)
    for name in ("pearson", "spearman", "kendall_tau_b", "mae"):
        d, ea, eb = diff[name], a[name], b[name]
        assert d is not None and ea is not None and eb is not None
        assert d.value == pytest.approx(ea.value - eb.value, abs=1e-12)
        # pairing: narrower than the difference of two independent bootstraps would be
        unpaired = np.hypot(ea.ci_high - ea.ci_low, eb.ci_high - eb.ci_low)
        assert d.ci_high - d.ci_low < unpaired, name
    assert diff["pearson"].ci_low > 0  # type: ignore[union-attr]  # the noise-free scorer is better
    assert diff["quadratic_weighted_kappa"] is None


def test_paired_difference_pairwise(llmbar: object) -> None:
    from tests.calibration.statistics.conftest import Pairs

    assert isinstance(llmbar, Pairs)
    fair = [(h, h) for h in llmbar.human]  # an oracle judge, consistent in both orders
    diff = paired_difference("pairwise", llmbar.human, llmbar.verdicts, fair, n_resamples=200)
    expected = sum(
        (f if f == s else "tie") == h
        for (f, s), h in zip(llmbar.verdicts, llmbar.human, strict=True)
    )
    assert diff["agreement"].value == pytest.approx(expected / len(fair) - 1.0)  # type: ignore[union-attr]
    assert diff["agreement"].ci_high < 0  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="both be judged once or both in two orders"):
        paired_difference("pairwise", llmbar.human, llmbar.verdicts, llmbar.human)
