"""Diversity over a doc's repeats: distinct-n, unique share, self-BLEU."""

from __future__ import annotations

import pytest
import sacrebleu

from assay.tasks.metrics import TASK_METRICS, reduce_scores, score_generation
from assay.tasks.metrics.diversity import distinct_n_value, self_bleu

REPEATS = ["the cat sat", "the cat ran", "a dog ran", "the cat sat"]


def test_distinct_n() -> None:
    # unigrams: the cat sat the cat ran a dog ran the cat sat → 12, distinct 6
    assert distinct_n_value(REPEATS, 1) == 6 / 12
    # bigrams: 8, distinct: the-cat, cat-sat, cat-ran, a-dog, dog-ran → 5
    assert distinct_n_value(REPEATS, 2) == 5 / 8
    assert distinct_n_value(["", " "], 1) == 0.0
    with pytest.raises(ValueError, match="n >= 1"):
        distinct_n_value(REPEATS, 0)


def test_self_bleu_is_mean_sentence_bleu_against_the_others() -> None:
    expected = sum(
        sacrebleu.sentence_bleu(t, REPEATS[:i] + REPEATS[i + 1 :]).score
        for i, t in enumerate(REPEATS)
    ) / len(REPEATS)
    assert self_bleu(None, REPEATS) == [expected]
    assert 0 < expected < 100
    with pytest.raises(ValueError, match="at least two repeats"):
        self_bleu(None, ["only one"])


def test_diversity_metrics_are_registered_and_usable_in_a_metric_list() -> None:
    metrics = [
        ("distinct_1", {}),
        ("distinct_2", {}),
        ("distinct_n", {"n": 3}),
        ("unique_share", {}),
        ("self_bleu", {}),
    ]
    scores = score_generation("gold", REPEATS, metrics)
    reduced = reduce_scores(scores, {})
    assert reduced["distinct_1"] == 0.5
    assert reduced["distinct_2"] == 5 / 8
    assert reduced["distinct_n"] == 3 / 4  # trigrams: 4, distinct 3
    assert reduced["unique_share"] == 3 / 4
    assert reduced["self_bleu"] == self_bleu(None, REPEATS)[0]
    assert TASK_METRICS.get("self_bleu").higher_is_better is False
    assert TASK_METRICS.get("distinct_2").output_types == ("generate_until",)
