"""The row score of a judge-prompt candidate is the objective the user chose: every
statistic ``optimize-judge`` lets a user maximise (κ, MCC, balanced accuracy, Spearman,
QWK, pairwise agreement, ...) is defined on an ordinary minibatch, equals the same
statistic computed by sklearn/scipy, and ranks a batch that agrees more with the people
above one that agrees less. A statistic name that the calibration room spells differently
would silently fall back to per-item agreement; this catches it."""

from __future__ import annotations

from typing import Any

import pytest
from scipy import stats
from sklearn import metrics

from assay.optimize.judge_config import OBJECTIVES
from assay.optimize.judge_evaluator import JudgeEvaluator
from assay.scoring.registry import ScorerConfig
from assay.types import ItemResult

BINARY_LABELS = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
BINARY_GOOD = [0.9, 0.2, 0.4, 0.1, 0.8, 0.6, 0.7, 0.9, 0.3, 0.2]  # 2 verdicts wrong
BINARY_BAD = [0.2, 0.7, 0.4, 0.1, 0.8, 0.6, 0.3, 0.9, 0.6, 0.2]  # 6 verdicts wrong

SCALE_LABELS = [1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 2.0, 4.0, 1.0, 5.0]
SCALE_GOOD = [1.0, 2.0, 3.0, 5.0, 4.0, 3.0, 1.0, 4.0, 1.0, 5.0]
SCALE_BAD = [4.0, 2.0, 1.0, 5.0, 2.0, 3.0, 5.0, 1.0, 3.0, 2.0]

PAIR_LABELS = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]  # 1 = the human preferred A
PAIR_GOOD = [("A", "A"), ("B", "B")] * 3 + [("A", "B"), ("B", "B")]  # one flip: a tie
PAIR_BAD = [("A", "B")] * 6 + [("B", "B"), ("A", "A")]  # position bias everywhere: ties


def evaluator(kind: str, objective: str) -> JudgeEvaluator:
    return JudgeEvaluator(
        base=ScorerConfig(type="toxicity"),
        judge_model=None,
        kind=kind,
        threshold=0.5 if kind == "binary" else None,
        objective=objective,
        labels={},
        raw_labels={},
        score_range=(0.0, 1.0) if kind in ("binary", "pairwise") else (1.0, 5.0),
    )


def reference(kind: str, objective: str, labels: list[float], scores: list[Any]) -> float:
    """The statistic computed without assay."""
    if kind == "pairwise":
        wanted = ["A" if label == 1.0 else "B" for label in labels]
        final = [s[0] if s[0] == s[1] else "tie" for s in scores]
        return sum(w == f for w, f in zip(wanted, final, strict=True)) / len(labels)
    if kind == "binary":
        truth = [int(label) for label in labels]
        verdict = [int(score >= 0.5) for score in scores]
        binary = {
            "kappa": metrics.cohen_kappa_score,
            "mcc": metrics.matthews_corrcoef,
            "balanced_accuracy": metrics.balanced_accuracy_score,
            "accuracy": metrics.accuracy_score,
            "f1": metrics.f1_score,
        }
        return float(binary[objective](truth, verdict))
    scale = {
        "spearman": lambda a, b: stats.spearmanr(a, b).statistic,
        "pearson": lambda a, b: stats.pearsonr(a, b).statistic,
        "kendall_tau_b": lambda a, b: stats.kendalltau(a, b, variant="b").statistic,
        "quadratic_weighted_kappa": lambda a, b: metrics.cohen_kappa_score(
            [int(x) for x in a], [int(x) for x in b], weights="quadratic"
        ),
    }
    return float(scale[objective](labels, scores))


def batches(kind: str) -> tuple[list[float], list[Any], list[Any]]:
    if kind == "binary":
        return BINARY_LABELS, BINARY_GOOD, BINARY_BAD
    if kind == "pairwise":
        return PAIR_LABELS, PAIR_GOOD, PAIR_BAD
    return SCALE_LABELS, SCALE_GOOD, SCALE_BAD


CASES = [(kind, objective) for kind, names in OBJECTIVES.items() for objective in names]


@pytest.mark.parametrize(("kind", "objective"), CASES, ids=[f"{k}-{o}" for k, o in CASES])
def test_every_objective_is_the_statistic_and_ranks_better_agreement_higher(
    kind: str, objective: str
) -> None:
    labels, good, bad = batches(kind)
    judge = evaluator(kind, objective)
    good_value = judge.statistic(labels, good)
    bad_value = judge.statistic(labels, bad)
    assert good_value is not None and bad_value is not None, objective
    assert good_value > bad_value
    if not objective.startswith("krippendorff"):  # α: checked against its own reference
        assert good_value == pytest.approx(reference(kind, objective, labels, good))
        assert bad_value == pytest.approx(reference(kind, objective, labels, bad))


def test_an_undefined_statistic_is_none_not_a_number() -> None:
    judge = evaluator("binary", "kappa")
    assert judge.statistic([1.0], [0.9]) is None  # one item
    assert judge.statistic([1.0, 1.0, 1.0], [0.9, 0.8, 0.7]) is None  # one class only


@pytest.mark.parametrize(
    ("score", "says"),
    [(0.75, "higher than the label by 0.5"), (0.0, "lower than the label by 0.25"), (0.25, None)],
)
def test_numeric_feedback_says_which_way_the_judge_disagrees(
    score: float, says: str | None
) -> None:
    judge = evaluator("numeric", "spearman")
    judge.labels, judge.raw_labels = {"x": 0.25}, {"x": "a bit"}
    result = ItemResult(item_id="x", output={"score": score, "reason": "too harsh a tone"})
    note = judge.note("x", result, score, judge.agreement(0.25, score), 0.4)
    assert "Human label: 'a bit'" in note and "Judge's reason: too harsh a tone" in note
    if says is None:
        assert "DISAGREES" not in note
    else:
        assert f"The judge DISAGREES with the human: its score is {says}." in note
