"""How an optimization ends (``optimize.outcome``): the held-out event carries the check's
numbers, and the completed result is built from the search and the progress, summarized and
stored in a real SQLite store with the lease released; a search without validation scores
stores nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from assay.optimize.config import make_optimize_config
from assay.optimize.events import OptimizeEvent, TestChecked
from assay.optimize.outcome import Searched, announce_test, complete_with
from assay.optimize.results import HeldOutCheck, OptimizeResult, summarize
from assay.optimize.session import Progress, Session
from assay.store import Store
from assay.testing import ScriptedModel


class _NeverEvaluates:
    """The session's evaluator; ending an optimization evaluates nothing."""

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("ending an optimization must not evaluate")

    def score(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("ending an optimization must not score")


class _Noted(OptimizeResult):
    """A kind of optimization with a field of its own (as the judge result has)."""

    note: str


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    created = asyncio.new_event_loop()
    yield created
    created.close()


def _session(
    store: Store,
    base_config: dict[str, Any],
    loop: asyncio.AbstractEventLoop,
    progress: Progress,
    events: list[OptimizeEvent],
) -> Session:
    store.optimizations.create("opt-1", name="arith", config=base_config, run_dir="/tmp/x")
    return Session(
        optimization_id="opt-1",
        config=make_optimize_config(base_config),
        store=store,
        reflection_model=ScriptedModel(responder=lambda m, s: "", name="reflect"),
        evaluator=_NeverEvaluates(),
        loop=loop,
        progress=progress,
        on_event=events.append,
    )


SEARCHED = Searched(
    best_idx=2,
    best={"instructions": "Answer with the number."},
    seed={"instructions": "You solve arithmetic."},
    candidates=3,
    stop_reason="budget: 40 metric calls",
)


def test_the_test_event_carries_the_checks_numbers(
    store: Store, base_config: dict[str, Any], loop: asyncio.AbstractEventLoop
) -> None:
    events: list[OptimizeEvent] = []
    session = _session(store, base_config, loop, Progress(), events)
    numbers: dict[str, Any] = {
        "seed_score": 0.25,
        "best_score": 0.75,
        "delta": 0.5,
        "ci_low": 0.125,
        "ci_high": 0.875,
        "verdict": "improved",
    }
    check = HeldOutCheck(items=6, seed_run_id="r1", best_run_id="r2", significant=True, **numbers)
    announce_test(session, check)
    assert events == [TestChecked(optimization_id="opt-1", **numbers)]


def test_the_completed_result_is_built_summarized_and_stored(
    store: Store, base_config: dict[str, Any], loop: asyncio.AbstractEventLoop
) -> None:
    progress = Progress(
        metric_calls=38, iterations=4, cost_usd=0.5, best_val_score=0.9, seed_val_score=0.4
    )
    session = _session(store, base_config, loop, progress, [])
    session.save_progress()  # holds the lease, as a running optimization does

    result = complete_with(_Noted, session, SEARCHED, None, summarize, note="its own")

    assert (result.best_idx, result.candidates, result.stop_reason) == (2, 3, SEARCHED.stop_reason)
    assert result.best_candidate == SEARCHED.best and result.seed_candidate == SEARCHED.seed
    assert (result.best_val_score, result.seed_val_score) == (0.9, 0.4)
    assert (result.metric_calls, result.iterations, result.cost_usd) == (38, 4, 0.5)
    assert result.status == "completed" and result.note == "its own" and result.test is None
    assert result.summary == summarize(result) and result.summary
    stored = store.optimizations.get("opt-1")
    assert stored.status == "completed"
    assert stored.result == result.model_dump(mode="json")
    assert stored.progress["lease_owner"] is None


def test_a_search_without_validation_scores_stores_nothing(
    store: Store, base_config: dict[str, Any], loop: asyncio.AbstractEventLoop
) -> None:
    session = _session(store, base_config, loop, Progress(metric_calls=5), [])
    with pytest.raises(AssertionError):
        complete_with(OptimizeResult, session, SEARCHED, None, summarize)
    stored = store.optimizations.get("opt-1")
    assert stored.status != "completed" and stored.result is None
