"""Minibatch sampling and parent selection that a resume reproduces exactly.

GEPA 0.1.4 seeds one ``random.Random(seed)`` when ``optimize`` starts and never saves it in
the run_dir state, so a resumed optimization would draw different minibatches and parents
than the run it continues. Here every draw is a pure function of (seed, iteration): the
minibatch of iteration ``i`` comes from the shuffle of epoch ``i // batches_per_epoch``, and
the Pareto parent from a generator seeded with ``i``. Killed and resumed, an optimization
makes the same choices as one that was never interrupted.
"""

from __future__ import annotations

import math
import random
from typing import Any

from gepa.core.data_loader import DataLoader
from gepa.core.state import GEPAState
from gepa.proposer.reflective_mutation.base import CandidateSelector
from gepa.strategies.candidate_selector import (
    CurrentBestCandidateSelector,
    ParetoCandidateSelector,
)


class IterationSeededSampler:
    """Epoch-shuffled minibatches (padded with the epoch's first ids to a whole number of
    batches, as GEPA's ``EpochShuffledBatchSampler`` pads), a function of (seed, iteration)."""

    def __init__(self, minibatch_size: int, seed: int) -> None:
        self.minibatch_size = minibatch_size
        self.seed = seed

    def next_minibatch_ids(
        self, loader: DataLoader[Any, Any], state: GEPAState[Any, Any]
    ) -> list[Any]:
        ids = list(loader.all_ids())
        if not ids:
            raise ValueError("cannot sample a minibatch from an empty training set")
        size = self.minibatch_size
        per_epoch = math.ceil(len(ids) / size)
        epoch, slot = divmod(max(state.i, 0), per_epoch)
        order = list(ids)
        random.Random(f"{self.seed}:epoch:{epoch}").shuffle(order)
        padded = order + [order[k % len(order)] for k in range(per_epoch * size - len(order))]
        return padded[slot * size : (slot + 1) * size]


class IterationSeededSelector(CandidateSelector):
    """``pareto`` with a generator seeded per iteration; ``current_best`` as GEPA's."""

    def __init__(self, strategy: str, seed: int) -> None:
        self.strategy = strategy
        self.seed = seed

    def select_candidate_idx(self, state: GEPAState[Any, Any]) -> int:
        if self.strategy == "current_best":
            best = CurrentBestCandidateSelector()  # type: ignore[no-untyped-call]
            return int(best.select_candidate_idx(state))
        rng = random.Random(f"{self.seed}:select:{state.i}")
        return int(ParetoCandidateSelector(rng=rng).select_candidate_idx(state))
