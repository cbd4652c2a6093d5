"""Task aggregation into lm-eval's result keys, and group aggregation over leaf tasks."""

from __future__ import annotations

import logging

import pytest

from assay.tasks.metrics import (
    aggregate_group,
    aggregate_metrics,
    aggregate_subtasks,
    mean_stderr,
    pooled_sample_stderr,
    resolve_aggregation,
    unweighted_mean_stderr,
)


def test_result_keys_and_stderr() -> None:
    raw = {
        ("acc", "none"): [1.0, 0.0, 1.0, 1.0],
        ("bleu", "none"): [("a b c d", "a b c d"), ("e f g h", "e f x h")],
    }
    out = aggregate_metrics(raw, bootstrap_iters=100)
    assert out["acc,none"] == 0.75
    assert out["acc_stderr,none"] == mean_stderr([1.0, 0.0, 1.0, 1.0])
    assert 0 < out["bleu,none"] < 100
    assert out["bleu_stderr,none"] is not None
    assert out["sample_len"] == 4


def test_custom_callable_aggregation_has_no_stderr() -> None:
    out = aggregate_metrics({("m", "f"): [1.0, 2.0]}, {"m": max})
    assert out == {"m,f": 2.0, "m_stderr,f": None, "sample_len": 2}
    assert resolve_aggregation("m", max) == ("max", max)


def test_subtask_means() -> None:
    assert aggregate_subtasks([1.0, 0.25], [2, 4]) == pytest.approx(0.5)
    assert aggregate_subtasks([1.0, 0.25], [2, 4], weight_by_size=False) == 0.625
    with pytest.raises(ValueError, match="2 subtask values but 1 sizes"):
        aggregate_subtasks([1.0, 0.25], [2])


def _leaf(values: list[float]) -> dict[str, object]:
    return aggregate_metrics({("acc", "none"): values}, {"acc": "mean"})


def test_group_stderr_pooled_or_unweighted(caplog: pytest.LogCaptureFixture) -> None:
    leaves = {"t1": _leaf([1.0, 0.0, 1.0]), "t2": _leaf([0.0, 0.0, 1.0, 1.0, 0.0])}
    stderrs = [leaves["t1"]["acc_stderr,none"], leaves["t2"]["acc_stderr,none"]]
    micro = aggregate_group(leaves, "acc,none", weight_by_size=True)
    assert micro is not None
    assert micro.value == pytest.approx(4 / 8)
    assert micro.stderr == pooled_sample_stderr(stderrs, [3, 5])  # type: ignore[arg-type]
    macro = aggregate_group(leaves, "acc,none", weight_by_size=False)
    assert macro is not None
    assert macro.value == pytest.approx((2 / 3 + 2 / 5) / 2)
    assert macro.stderr == unweighted_mean_stderr(stderrs)  # type: ignore[arg-type]
    assert macro.sample_len == 8 and macro.tasks == ("t1", "t2")

    leaves["t3"] = _leaf([1.0])  # one doc: no stderr, so the group has none either
    leaves["t4"] = aggregate_metrics({("f1", "none"): [(1, 1), (0, 1)]}, bootstrap_iters=0)
    with caplog.at_level(logging.WARNING):
        partial = aggregate_group(leaves, "acc,none")
    assert partial is not None and partial.stderr is None
    assert "missing in 1 leaf tasks" in caplog.text
    assert aggregate_group(leaves, "exact_match,none") is None
