"""Each aggregation equals the library it names, on real text (STS-B pairs)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from sklearn.metrics import f1_score, matthews_corrcoef

from assay.tasks.metrics import TASK_AGGREGATIONS, sacreformat
from assay.tasks.metrics import aggregations as agg

STSB = Path(__file__).parents[2] / "fixtures" / "lmeval" / "stsb_test_sample.jsonl"


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in STSB.read_text().splitlines() if line.strip()]
    return [(r["sentence1"], r["sentence2"]) for r in rows]


@pytest.fixture(scope="module")
def labels() -> list[tuple[int, int]]:
    rows = [json.loads(line) for line in STSB.read_text().splitlines() if line.strip()]
    # gold: similar (score >= 2.5); prediction: a cruder rule, so the two disagree sometimes
    return [(int(r["score"] >= 2.5), int(len(r["sentence1"]) % 3 != 0)) for r in rows]


def _items(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(ref, pred) for ref, pred in pairs]  # (reference, prediction) as lm-eval


@pytest.mark.parametrize(
    ("name", "direct"),
    [
        ("bleu", lambda p, r: sacrebleu.corpus_bleu(p, r).score),
        ("chrf", lambda p, r: sacrebleu.corpus_chrf(p, r).score),
        ("chrf++", lambda p, r: sacrebleu.corpus_chrf(p, r, word_order=2).score),
        ("ter", lambda p, r: sacrebleu.corpus_ter(p, r).score),
    ],
)
def test_sacrebleu_aggregations_equal_sacrebleu(
    name: str, direct: object, pairs: list[tuple[str, str]]
) -> None:
    refs = [r for r, _ in pairs]
    preds = [p for _, p in pairs]
    value = TASK_AGGREGATIONS.get(name).fn(_items(pairs))
    assert value == direct(preds, [refs])  # type: ignore[operator]
    assert 0 < value < 100


def test_multi_reference_bleu_transposes_reference_streams(pairs: list[tuple[str, str]]) -> None:
    docs = [([pairs[i][0], pairs[i + 1][1]], pairs[i][1]) for i in range(0, 40, 2)]
    preds = [p for _, p in docs]
    streams = [[refs[0] for refs, _ in docs], [refs[1] for refs, _ in docs]]
    assert agg.bleu(list(docs)) == sacrebleu.corpus_bleu(preds, streams).score
    assert sacreformat([refs for refs, _ in docs], preds) == (streams, preds)


def test_ragged_references_raise_instead_of_being_truncated() -> None:
    items = [(["a b c", "a b d"], "a b c"), (["x y z"], "x y z")]
    with pytest.raises(ValueError, match="same number of references"):
        agg.bleu(items)


def test_f1_and_mcc_equal_sklearn(labels: list[tuple[int, int]]) -> None:
    golds = [g for g, _ in labels]
    preds = [p for _, p in labels]
    assert agg.f1(list(labels)) == f1_score(golds, preds)
    assert agg.matthews_corrcoef(list(labels)) == matthews_corrcoef(golds, preds)
    assert 0 < agg.f1(list(labels)) < 1


def test_multiclass_f1_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"binary F1 .* labels \[0, 1, 2\]"):
        agg.f1([(0, 1), (2, 2), (1, 0)])


def test_median_is_the_upper_median() -> None:
    assert agg.median([4, 1, 3, 2]) == 3
    assert agg.median([3.0, 1.0, 2.0]) == 2.0


def test_mean_nanmean_and_errors() -> None:
    assert agg.mean([1, 2, 3, 4]) == 2.5
    assert agg.nanmean([1.0, float("nan"), 3.0]) == 2.0
    assert math.isnan(agg.nanmean([float("nan")]))
    with pytest.raises(ValueError, match="at least one"):
        agg.mean([])
    with pytest.raises(ValueError, match="custom aggregation"):
        agg.mean([(0, [-1.0, -2.0])])


def test_perplexities_and_bits_per_byte() -> None:
    assert agg.perplexity([-1.0, -3.0]) == pytest.approx(math.exp(2.0), rel=1e-15)
    items = [(-10.0, 4), (-6.0, 4)]
    assert agg.weighted_perplexity(items) == pytest.approx(math.exp(2.0), rel=1e-15)
    assert agg.bits_per_byte(items) == pytest.approx(2.0 / math.log(2), rel=1e-15)
    with pytest.raises(ValueError, match="sum to 0"):
        agg.weighted_perplexity([(-1.0, 0)])


def test_brier_score_aggregation() -> None:
    items = [(0, [1.0, 0.0]), (1, [0.5, 0.5])]
    assert agg.brier_score(items) == pytest.approx((0.0 + 0.5) / 2, abs=1e-15)
    with pytest.raises(ValueError, match="gold index -100"):
        agg.brier_score([(-100, [0.5, 0.5])])
    with pytest.raises(ValueError, match="same number of choices"):
        agg.brier_score([(0, [1.0]), (0, [0.5, 0.5])])


def test_bypass_is_999() -> None:
    assert agg.bypass([None, None]) == 999
    assert np.isfinite(agg.bypass([]))
