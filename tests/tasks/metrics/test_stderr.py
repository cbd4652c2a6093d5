"""Stderr: the vectorised bootstrap draws lm-eval's very resamples and gives its numbers."""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

import numpy as np
import pytest

from assay.tasks.metrics import TASK_AGGREGATIONS, stderr_for
from assay.tasks.metrics.stderr import (
    _python_random_indices,
    acc_all_stderr,
    bootstrap_replicates,
    bootstrap_stderr,
    mean_stderr,
    pooled_sample_stderr,
    resample_indices,
    unweighted_mean_stderr,
)


def literal_bootstrap(statistic: Any, xs: list[Any], iters: int) -> float:
    """lm-eval's single-process bootstrap written out plainly (the behaviour to match)."""
    replicates = []
    chunk = min(1000, iters)
    for i in range(iters // chunk):
        rnd = random.Random(i)
        for _ in range(chunk):
            replicates.append(statistic(rnd.choices(xs, k=len(xs))))
    mu = sum(replicates) / len(replicates)
    return math.sqrt(sum((x - mu) ** 2 for x in replicates) / (len(replicates) - 1))


@pytest.mark.parametrize("seed", [0, 1, 5, 99])
@pytest.mark.parametrize("n", [1, 2, 17, 256])
def test_indices_are_pythons_random_choices(seed: int, n: int) -> None:
    rnd = random.Random(seed)
    expected = [rnd.choices(range(n), k=n) for _ in range(30)]
    assert _python_random_indices(seed, 30, n).tolist() == expected


def test_chunks_are_seeded_by_chunk_index_and_only_whole_chunks_are_drawn() -> None:
    chunks = list(resample_indices(10, 2500))
    assert [c.shape for c in chunks] == [(1000, 10), (1000, 10)]
    assert chunks[1][0].tolist() == random.Random(1).choices(range(10), k=10)
    assert [c.shape for c in resample_indices(10, 100)] == [(100, 10)]


@pytest.fixture
def scores() -> list[float]:
    rnd = random.Random(3)
    return [rnd.gauss(-2.0, 1.0) for _ in range(60)] + [float("nan"), -1.5, -1.5]


@pytest.mark.parametrize("name", ["median", "perplexity", "nanmean", "mean"])
def test_vectorised_bootstrap_equals_the_literal_one(name: str, scores: list[float]) -> None:
    items = [x for x in scores if not math.isnan(x)] if name != "nanmean" else scores
    fn = TASK_AGGREGATIONS.get(name).fn
    expected = literal_bootstrap(fn, items, 3000)
    assert bootstrap_stderr(fn, items, 3000, aggregation_name=name) == expected


def test_generic_bootstrap_for_a_custom_statistic_equals_the_literal_one() -> None:
    items = [1, 4, 2, 8, 5, 7, 3]

    def spread(xs: list[int]) -> float:
        return float(max(xs) - min(xs))

    assert bootstrap_stderr(spread, items, 2000) == literal_bootstrap(spread, items, 2000)
    assert len(bootstrap_replicates(spread, items, 2000)) == 2000


def test_mean_stderr_is_bessel_corrected() -> None:
    items = [0.0, 1.0, 1.0, 0.0, 1.0]
    assert mean_stderr(items) == pytest.approx(statistics.stdev(items) / math.sqrt(5), abs=1e-15)
    assert stderr_for("mean", items) == mean_stderr(items)


def test_no_stderr_where_lm_eval_says_na() -> None:
    assert stderr_for("mean", [1.0]) is None
    assert stderr_for("mean", [1.0, 0.0], bootstrap_iters=0) is None
    assert stderr_for("mean", [1.0, 0.0], bootstrap_iters=None) is None
    for name in ("bypass", "weighted_perplexity", "bits_per_byte", "brier_score"):
        assert stderr_for(name, [(1.0, 2), (0.5, 3)]) is None


def test_corpus_metrics_are_capped_at_100_iterations() -> None:
    items = [
        ("The cat sat on the mat.", "The cat lay on the mat."),
        ("It was a fine day.", "It was a nice day."),
        ("Dogs bark loudly at night.", "Dogs bark at night."),
    ]
    bleu = TASK_AGGREGATIONS.get("bleu").fn
    capped = stderr_for("bleu", list(items), bootstrap_iters=100_000)
    assert capped == literal_bootstrap(bleu, list(items), 100)
    # the cap is by metric name: another metric aggregated with bleu is not capped
    uncapped = stderr_for("bleu", list(items), bootstrap_iters=200, metric="my_bleu")
    assert uncapped == literal_bootstrap(bleu, list(items), 200)
    assert uncapped != capped


def test_mcc_and_f1_are_bootstrapped() -> None:
    items = [(1, 1), (0, 0), (1, 0), (0, 1), (1, 1), (0, 0), (1, 1)]
    for name in ("matthews_corrcoef", "f1"):
        fn = TASK_AGGREGATIONS.get(name).fn
        assert stderr_for(name, list(items), bootstrap_iters=200) == literal_bootstrap(
            fn, list(items), 200
        )


@pytest.mark.filterwarnings("ignore::UserWarning")  # sklearn on one-class resamples
@pytest.mark.parametrize(("n", "classes"), [(3, 2), (40, 2), (40, 4)])
def test_vectorised_mcc_and_f1_equal_sklearn_per_replicate(n: int, classes: int) -> None:
    """The confusion-count replicates equal sklearn's to the bit, degenerate resamples (one
    class only) included."""
    rnd = random.Random(n * classes)
    items = [(rnd.randrange(classes), rnd.randrange(classes)) for _ in range(n)]
    mcc = TASK_AGGREGATIONS.get("matthews_corrcoef").fn
    assert bootstrap_stderr(mcc, items, 1500) == literal_bootstrap(mcc, items, 1500)
    if classes == 2:
        f1 = TASK_AGGREGATIONS.get("f1").fn
        assert bootstrap_stderr(f1, items, 1500) == literal_bootstrap(f1, items, 1500)
    # the per-replicate values themselves, not only their spread
    from assay.tasks.metrics.stderr import _mcc_replicates

    expected = bootstrap_replicates(lambda xs: mcc(xs), items, 1000)
    assert _mcc_replicates(items, 1000) == expected


def test_acc_all_stderr_groups_by_question() -> None:
    def doc(paragraph: int, question: int, label: int) -> dict[str, Any]:
        return {"idx": {"paragraph": paragraph, "question": question}, "label": label}

    items = [
        (True, doc(0, 0, 1)),
        (False, doc(0, 0, 0)),
        (True, doc(0, 1, 0)),
        (True, doc(1, 2, 1)),
        (False, doc(1, 3, 1)),
    ]
    # questions 0: all right, 1: wrong, 2: right, 3: wrong
    assert acc_all_stderr(items) == mean_stderr([1, 0, 1, 0])
    assert stderr_for("acc_all", items) == mean_stderr([1, 0, 1, 0])
    assert TASK_AGGREGATIONS.get("acc_all").fn(items) == 0.5


def test_group_stderrs() -> None:
    stderrs, sizes = [0.1, 0.2], [10, 30]
    pooled = math.sqrt(((9 * 0.01 * 10) + (29 * 0.04 * 30)) / (40 - 2) / 40)
    assert pooled_sample_stderr(stderrs, sizes) == pytest.approx(pooled, rel=1e-12)
    assert unweighted_mean_stderr(stderrs) == pytest.approx(math.sqrt(0.05) / 2, rel=1e-12)
    with pytest.raises(ValueError, match="2 stderrs but 1 sizes"):
        pooled_sample_stderr(stderrs, [3])


def test_pooled_stderr_matches_the_stderr_of_the_concatenation_for_equal_means() -> None:
    a, b = [0.0, 1.0] * 10, [1.0, 0.0] * 15
    pooled = pooled_sample_stderr([mean_stderr(a), mean_stderr(b)], [len(a), len(b)])
    assert pooled == pytest.approx(mean_stderr(a + b), rel=0.05)
    assert np.isfinite(pooled)
