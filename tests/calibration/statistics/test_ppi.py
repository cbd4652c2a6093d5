"""Prediction-powered mean: coverage over many seeded label splits of STS-B."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from assay.calibration.statistics import ppi_mean
from tests.calibration.statistics.conftest import Labelled

SPLITS = 200
LABELLED = 40


def test_covers_the_full_label_mean_and_beats_labelled_only(stsb: Labelled) -> None:
    human = stsb.labels / 5.0
    judge = stsb.scores / 5.0  # biased low: the plain judge mean misses the truth
    truth = human.mean()
    z = norm.ppf(0.975)
    covered = narrower = judge_covered = 0
    widths, classical_widths = [], []
    for seed in range(SPLITS):
        rng = np.random.default_rng(seed)
        labelled = rng.choice(human.shape[0], size=LABELLED, replace=False)
        estimate = ppi_mean(judge, judge[labelled], human[labelled])
        covered += estimate.ci_low <= truth <= estimate.ci_high
        classical_half = z * human[labelled].std(ddof=1) / np.sqrt(LABELLED)
        narrower += (estimate.ci_high - estimate.ci_low) < 2 * classical_half
        widths.append(estimate.ci_high - estimate.ci_low)
        classical_widths.append(2 * classical_half)
        judge_half = z * judge.std(ddof=1) / np.sqrt(judge.shape[0])
        judge_covered += abs(judge.mean() - truth) <= judge_half
        assert estimate.judge_mean == pytest.approx(judge.mean())
        assert estimate.n == human.shape[0] and estimate.n_labelled == LABELLED
    assert covered / SPLITS >= 0.9
    assert narrower >= 0.95 * SPLITS
    assert np.mean(widths) < 0.85 * np.mean(classical_widths)
    assert judge_covered == 0  # the uncorrected judge mean is confidently wrong


def test_value_is_judge_mean_plus_rectifier() -> None:
    judge_all = [0.2, 0.4, 0.6, 0.8, 1.0]
    estimate = ppi_mean(judge_all, [0.2, 0.6, 1.0], [0.5, 0.5, 1.0], alpha=0.1, tuning="classical")
    rectifier = np.array([0.3, -0.1, 0.0])
    assert estimate.value == pytest.approx(0.6 + rectifier.mean())
    half = norm.ppf(0.95) * np.sqrt(np.var(judge_all, ddof=1) / 5 + rectifier.var(ddof=1) / 3)
    assert estimate.ci_high - estimate.value == pytest.approx(half)
    assert estimate.to_json()["n_labelled"] == 3


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="judge_labelled has 2 values but human_labelled has 3"):
        ppi_mean([0.1, 0.2, 0.3], [0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"human_labelled\[1\] is nan"):
        ppi_mean([0.1, 0.2, 0.3], [0.1, 0.2], [0.1, float("nan")])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([0.1, 0.2, 0.3], [0.1], [0.1])


def _coverage(human: np.ndarray, judge: np.ndarray, tuning: str, splits: int) -> tuple[float, int]:
    truth = human.mean()
    z = norm.ppf(0.975)
    covered = wider = 0
    for seed in range(splits):
        rng = np.random.default_rng(seed)
        labelled = rng.choice(human.shape[0], size=LABELLED, replace=False)
        estimate = ppi_mean(judge, judge[labelled], human[labelled], tuning=tuning)  # type: ignore[arg-type]
        covered += estimate.ci_low <= truth <= estimate.ci_high
        y = human[labelled]
        if min(y.sum(), LABELLED - y.sum()) >= 5:  # labels-only variance is trustworthy
            alone = 2 * z * y.std(ddof=1) / np.sqrt(LABELLED)
            wider += (estimate.ci_high - estimate.ci_low) > alone + 1e-12
    return covered / splits, wider


def test_power_tuned_ppi_keeps_coverage_for_a_strong_and_a_weak_judge(
    feedbackqa: Labelled,
) -> None:
    # a large judged set (the human-labelled items drawn 20,000 times), so the judge's
    # own mean is precise and the interval rests on the rectifier, as in practice
    rng = np.random.default_rng(26)
    drawn = rng.choice(feedbackqa.labels.shape[0], size=20_000)
    human = feedbackqa.labels[drawn]
    # a strong discrete judge: right except for 2% false positives (a one-sided bias)
    strong = np.maximum(human, rng.random(human.shape[0]) < 0.02)
    lexical = feedbackqa.scores[drawn]
    weak = (lexical >= np.median(lexical)).astype(np.float64)
    for judge in (strong, weak):
        covered, wider = _coverage(human, judge, "power", 1000)
        assert covered >= 0.93
        assert wider == 0  # never wider than the labelled items alone
    classical, _ = _coverage(human, strong, "classical", 1000)
    assert classical < 0.9  # the degenerate rectifier: what the guards fix
    estimate = ppi_mean(strong, human[:40], human[:40])
    assert estimate.warning is not None and "too few" in estimate.warning
