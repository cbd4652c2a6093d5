"""The task-metric and aggregation registries: contents, directions, defaults, plugins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.registry import DuplicateNameError, UnknownNameError
from assay.tasks.metrics import (
    TASK_AGGREGATIONS,
    TASK_METRICS,
    aggregate_metrics,
    default_metrics,
    register_task_aggregation,
    register_task_metric,
    stderr_for,
)

V04_METRICS = {
    "acc",
    "acc_all",
    "acc_bytes",
    "acc_mutual_info",
    "acc_norm",
    "bits_per_byte",
    "bleu",
    "brier_score",
    "bypass",
    "byte_perplexity",
    "chrf",
    "chrf++",
    "exact_match",
    "f1",
    "likelihood",
    "mcc",
    "perplexity",
    "ter",
    "word_perplexity",
}
V05_METRICS = {
    "exact_match_mc",
    "bpb",
    "logprob",
    "choice_logprob",
    "choice_prob_norm",
    "choice_logprob_norm",
}
AGGREGATIONS = {
    "bypass",
    "nanmean",
    "mean",
    "median",
    "perplexity",
    "weighted_perplexity",
    "bits_per_byte",
    "f1",
    "matthews_corrcoef",
    "bleu",
    "chrf",
    "chrf++",
    "ter",
    "brier_score",
}
LOWER_IS_BETTER = {
    "ter",
    "perplexity",
    "word_perplexity",
    "byte_perplexity",
    "bits_per_byte",
    "brier_score",
    "bpb",
    "self_bleu",
}


def test_every_lm_eval_metric_and_aggregation_is_registered() -> None:
    assert set(TASK_METRICS.names()) >= V04_METRICS | V05_METRICS
    assert set(TASK_AGGREGATIONS.names()) >= AGGREGATIONS
    for name in TASK_METRICS.names():
        metric = TASK_METRICS.get(name)
        assert metric.aggregation in TASK_AGGREGATIONS, name
        assert metric.output_types, name
        assert metric.description, name


def test_directions_follow_lm_eval_0_4_13() -> None:
    for name in TASK_METRICS.names():
        assert TASK_METRICS.get(name).higher_is_better is (name not in LOWER_IS_BETTER), name


def test_default_aggregations() -> None:
    expected = {
        "mcc": "matthews_corrcoef",
        "word_perplexity": "weighted_perplexity",
        "byte_perplexity": "weighted_perplexity",
        "bits_per_byte": "bits_per_byte",
        "f1": "f1",
        "bleu": "bleu",
        "chrf++": "chrf++",
        "acc": "mean",
        "bypass": "bypass",
    }
    for metric, aggregation in expected.items():
        assert TASK_METRICS.get(metric).aggregation == aggregation


def test_default_metrics_per_output_type() -> None:
    assert default_metrics("loglikelihood") == ["perplexity", "acc"]
    assert default_metrics("loglikelihood_rolling") == [
        "word_perplexity",
        "byte_perplexity",
        "bits_per_byte",
    ]
    assert default_metrics("multiple_choice") == ["acc", "acc_norm"]
    assert default_metrics("generate_until") == ["exact_match"]
    with pytest.raises(ValueError, match="unknown output_type 'generate'"):
        default_metrics("generate")


def test_unknown_names_suggest() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'matthews_corrcoef'"):
        TASK_AGGREGATIONS.get("matthews_corrcoeff")


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        TASK_METRICS.unregister(name)
        TASK_AGGREGATIONS.unregister(name)


def test_users_register_metrics_and_aggregations(cleanup: list[str]) -> None:
    @register_task_aggregation("geometric_mean")
    def geometric_mean(items: list[float]) -> float:
        """Geometric mean of positive values."""
        product = 1.0
        for x in items:
            product *= x
        return product ** (1 / len(items))

    @register_task_metric(
        "length_ratio",
        aggregation="geometric_mean",
        higher_is_better=True,
        output_types=["generate_until"],
    )
    def length_ratio(references: str, predictions: list[str]) -> list[float]:
        """Prediction length ÷ reference length."""
        return [len(p) / len(references) for p in predictions]

    cleanup.extend(["geometric_mean", "length_ratio"])
    assert TASK_METRICS.get("length_ratio").description == "Prediction length ÷ reference length."
    out = aggregate_metrics({("length_ratio", "none"): [1.0, 4.0]}, bootstrap_iters=100)
    assert out["length_ratio,none"] == pytest.approx(2.0)
    assert out["length_ratio_stderr,none"] is None  # not bootstrappable: lm-eval's "N/A"
    assert stderr_for("geometric_mean", [1.0, 4.0]) is None
    with pytest.raises(DuplicateNameError):
        register_task_aggregation("mean")(geometric_mean)


def test_unknown_metric_falls_back_to_mean_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    out = aggregate_metrics({("my_metric", "strict"): [1.0, 0.0, 1.0, 1.0]})
    assert out["my_metric,strict"] == 0.75
    assert out["my_metric_stderr,strict"] == pytest.approx(0.25)
    assert out["sample_len"] == 4
    assert "no aggregation defined for metric 'my_metric'" in caplog.text
