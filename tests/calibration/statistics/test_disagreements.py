"""Disagreement ranking: the items where judge and humans fall on opposite sides."""

from __future__ import annotations

import pytest

from assay.calibration.statistics import disagreements
from tests.calibration.statistics.conftest import Labelled


def test_ranked_by_gap_with_both_kinds(feedbackqa: Labelled) -> None:
    y, s = feedbackqa.labels, feedbackqa.scores
    found = disagreements(y, s, threshold=0.3)
    expected = {i for i in range(y.shape[0]) if (s[i] >= 0.3) != (y[i] >= 0.3)}
    assert {d.position for d in found} == expected
    gaps = [d.gap for d in found]
    assert gaps == sorted(gaps, reverse=True)
    kinds = {d.kind for d in found}
    assert kinds == {"judge_high_human_low", "judge_low_human_high"}
    for d in found:
        assert d.gap == pytest.approx(abs(s[d.position] - y[d.position]))
        high = s[d.position] >= 0.3
        assert d.kind == ("judge_high_human_low" if high else "judge_low_human_high")
    index, kind, gap, *_ = found[0]
    assert (index, kind, gap) == (found[0].position, found[0].kind, found[0].gap)
    assert disagreements(y, s, threshold=0.3, limit=5) == found[:5]


def test_ties_keep_index_order() -> None:
    found = disagreements([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], threshold=0.5)
    assert [d.position for d in found] == [0, 1, 2]
    assert [d.kind for d in found] == [
        "judge_low_human_high",
        "judge_high_human_low",
        "judge_low_human_high",
    ]
