"""Progress of an optimization as typed events.

Why events rather than printing: the terminal (``assay optimize``) renders them, and the web
view streams them as Server-Sent Events (``optimize.feed``: a kept candidate is a
``checkpoint``, a proposal's diff and a rejection are ``log`` lines); each has a ``kind`` and
serializes with ``model_dump_json``. An ``on_event`` callback receives them in
order, from the thread that runs GEPA; an exception it raises stops the optimization (it is
then ``interrupted`` and ``assay optimize resume`` continues it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    optimization_id: str


class Started(_Event):
    kind: Literal["started"] = "started"
    resumed: bool
    train_size: int
    val_size: int
    test_size: int
    max_metric_calls: int | None = None
    max_iterations: int | None = None
    max_cost_usd: float | None = None
    max_wall_time_s: float | None = None


class IterationStarted(_Event):
    kind: Literal["iteration"] = "iteration"
    iteration: int
    metric_calls: int
    cost_usd: float
    elapsed_s: float
    best_val_score: float | None


class Evaluated(_Event):
    """One (candidate, split) batch evaluated: a stored run (``run_id``)."""

    kind: Literal["evaluated"] = "evaluated"
    iteration: int
    split: str
    candidate_hash: str
    items: int
    mean_score: float
    run_id: str | None
    reused: bool = False
    """True when the results were read back from an earlier stored run (resume)."""
    cost_usd: float


class Proposed(_Event):
    """The reflection model rewrote a component: the diff against the parent's text."""

    kind: Literal["proposed"] = "proposed"
    iteration: int
    component: str
    diff: str


class ReflectionFailed(_Event):
    kind: Literal["reflection_failed"] = "reflection_failed"
    iteration: int
    component: str
    error: str


class CandidateKept(_Event):
    """A child beat its parent on the minibatch and was scored on the validation set."""

    kind: Literal["candidate"] = "candidate"
    iteration: int
    idx: int
    parents: list[int]
    changed: list[str]
    val_score: float
    best_val_score: float
    is_best: bool
    components: dict[str, str] = {}
    """The candidate's texts (the web view shows the best one live)."""


class CandidateRejected(_Event):
    kind: Literal["rejected"] = "rejected"
    iteration: int
    parent_score: float
    child_score: float


class Finished(_Event):
    kind: Literal["finished"] = "finished"
    status: str
    best_idx: int
    best_val_score: float
    seed_val_score: float
    metric_calls: int
    iterations: int
    cost_usd: float


class TestChecked(_Event):
    __test__ = False  # not a pytest class

    kind: Literal["test"] = "test"
    seed_score: float | None
    best_score: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str


OptimizeEvent = (
    Started
    | IterationStarted
    | Evaluated
    | Proposed
    | ReflectionFailed
    | CandidateKept
    | CandidateRejected
    | Finished
    | TestChecked
)
EventHandler = Callable[[OptimizeEvent], None]
