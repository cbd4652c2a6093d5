"""The shared judge score formulas."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from assay.scorers._lib.formulas import (
    capped_penalty,
    clamp,
    count,
    mean_average_precision,
    share,
    weighted_share,
)


@dataclass
class V:
    verdict: object


def vs(*labels: object) -> list[V]:
    return [V(label) for label in labels]


def test_share_counts_trimmed_lower_cased_labels() -> None:
    assert share(vs("yes", " YES ", "no", "unsure"), "verdict", "yes") == 0.5
    assert count(vs("yes", "no"), "verdict", "no") == 1
    assert share([], "verdict", "yes") == 0.0
    assert share(vs(True, False), "verdict", True) == 0.5


def test_share_of_a_given_total_is_capped_at_one() -> None:
    assert share(vs("yes", "yes", "yes"), "verdict", "yes", of=2) == 1.0
    assert share(vs("yes"), "verdict", "yes", of=4) == 0.25
    assert share(vs("yes"), "verdict", "yes", of=0) == 0.0


def test_weighted_share_is_the_reference_sum_to_the_last_bit() -> None:
    labels = vs("yes", "unsure", "no", "yes", "unsure", "unsure", "yes")
    got = weighted_share(labels, "verdict", {"yes": 1.0, "unsure": 0.3})
    assert got == (3 + 0.3 * 3) / 7
    assert weighted_share([], "verdict", {"yes": 1.0}) == 0.0


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([True, False, True], (1 / 1 + 2 / 3) / 2),
        ([False, True], 0.5),
        ([False, False], 0.0),
        ([], 0.0),
        ([True, True], 1.0),
    ],
)
def test_mean_average_precision(flags: list[bool], expected: float) -> None:
    assert mean_average_precision(flags) == pytest.approx(expected)


def test_penalties_and_clamp() -> None:
    assert capped_penalty(2, 0.15, 0.5) == 0.3
    assert capped_penalty(9, 0.15, 0.5) == 0.5
    assert clamp(-0.2) == 0.0 and clamp(1.4) == 1.0 and clamp(0.4) == 0.4
