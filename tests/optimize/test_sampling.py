"""Minibatches and parents are functions of (seed, iteration), so a resume replays them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from gepa.core.data_loader import ListDataLoader

from assay.optimize.sampling import IterationSeededSampler


def _state(i: int) -> Any:
    return SimpleNamespace(i=i)


def test_each_epoch_covers_every_id_and_padding_fills_the_last_batch() -> None:
    loader = ListDataLoader(list(range(7)))
    sampler = IterationSeededSampler(3, seed=5)
    epoch = [sampler.next_minibatch_ids(loader, _state(i)) for i in range(3)]
    assert all(len(batch) == 3 for batch in epoch)
    assert set().union(*map(set, epoch)) == set(range(7))
    assert epoch != [sampler.next_minibatch_ids(loader, _state(i)) for i in range(3, 6)]


def test_a_fresh_sampler_draws_the_same_batch_for_the_same_iteration() -> None:
    loader = ListDataLoader(list(range(10)))
    first = IterationSeededSampler(4, seed=1)
    sequence = [first.next_minibatch_ids(loader, _state(i)) for i in range(8)]
    resumed = IterationSeededSampler(4, seed=1)  # as after a restart, at iteration 5
    assert resumed.next_minibatch_ids(loader, _state(5)) == sequence[5]
    other_seed = IterationSeededSampler(4, seed=2)
    assert [other_seed.next_minibatch_ids(loader, _state(i)) for i in range(8)] != sequence
