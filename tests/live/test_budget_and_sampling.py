"""The budget window and the sampling decision."""

from __future__ import annotations

import random

import pytest

from assay.live.budget import Budget, window_seconds
from assay.live.sampling import id_fraction, is_sampled


def test_budget_refuses_the_call_that_would_cross_it_and_resets_next_window() -> None:
    budget = Budget(1.0, "hour")
    t0 = 7200.0  # the start of an hour
    assert budget.allows(t0)
    budget.spend(0.4, t0)  # estimate per call now 0.4
    assert budget.allows(t0 + 1)  # 0.4 + 0.4 <= 1
    budget.spend(0.4, t0 + 1)
    assert not budget.allows(t0 + 2)  # 0.8 + 0.4 > 1
    assert budget.allows(t0 + 3600)  # the next hour starts from zero
    assert budget.snapshot()["spent_usd"] == 0.0


def test_zero_budget_scores_nothing_and_no_budget_everything() -> None:
    assert not Budget(0.0).allows(0.0)
    unlimited = Budget(None)
    unlimited.spend(1e9, 0.0)
    assert unlimited.allows(1.0)


def test_resume_continues_the_same_window_only() -> None:
    budget = Budget(1.0, 60)
    budget.resume(window_start=120.0, spent_usd=0.95, scored=5, now=130.0)
    assert not budget.allows(131.0)  # 0.95 spent + 0.19 expected > 1
    other = Budget(1.0, 60)
    other.resume(window_start=60.0, spent_usd=0.9, scored=9, now=130.0)  # an older window
    assert other.snapshot()["spent_usd"] == 0.0


@pytest.mark.parametrize("bad", ["fortnight", 0, -5])
def test_bad_windows_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="budget_window"):
        window_seconds(bad)  # type: ignore[arg-type]


def test_deterministic_sampling_is_by_id_and_near_the_rate() -> None:
    ids = [f"obs-{i}" for i in range(20_000)]
    picked = [i for i in ids if is_sampled(i, 0.1, deterministic=True)]
    assert picked == [i for i in ids if is_sampled(i, 0.1, deterministic=True)]  # stable
    assert 0.09 < len(picked) / len(ids) < 0.11
    nested = {i for i in ids if is_sampled(i, 0.2, deterministic=True)}
    assert set(picked) <= nested  # a higher rate samples a superset
    assert all(0.0 <= id_fraction(i) < 1.0 for i in ids[:100])
    rng = random.Random(1)
    share = sum(is_sampled("same", 0.3, deterministic=False, rng=rng) for _ in range(10_000))
    assert 2700 < share < 3300  # random: the same id is sampled about 30% of the time
    assert is_sampled("x", 1.0, deterministic=True) and not is_sampled("x", 0.0, deterministic=True)
