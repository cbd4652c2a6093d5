"""How every optimization ends once GEPA's search is over, whatever it optimizes.

Task prompts (``optimizer``) and judge prompts (``judge``) check the winner on the held-out
split differently and add their own fields to the result, but they finish the same way:
the held-out check is announced as a ``TestChecked`` event, the result's common fields come
from what the search found (``Searched``) and the session's progress, and the result is
stored as the optimization's outcome (``status="completed"``) when the lease is released.
Keeping that here means both kinds store and report the same fields the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from assay.optimize.events import TestChecked
from assay.optimize.results import HeldOutCheck, OptimizeResult
from assay.optimize.session import Session

R = TypeVar("R", bound=OptimizeResult)


@dataclass
class Searched:
    """What GEPA's search found, before the held-out check."""

    best_idx: int
    best: dict[str, str]
    seed: dict[str, str]
    candidates: int
    stop_reason: str | None


_ANNOUNCED = set(TestChecked.model_fields) - {"kind", "optimization_id"}
"""The held-out check's fields the ``TestChecked`` event carries (scores, CI, verdict)."""


def announce_test(session: Session, check: HeldOutCheck) -> None:
    """Tell the listeners how the seed and the winner did on the held-out split."""
    headline = check.model_dump(include=_ANNOUNCED)
    session.emit(TestChecked(optimization_id=session.id, **headline))


def complete(session: Session, result: BaseModel) -> None:
    """Store ``result`` as the optimization's outcome and release it."""
    session.release()
    session.save_progress()
    session.store.optimizations.update(
        session.id, status="completed", result=result.model_dump(mode="json")
    )


_FROM_PROGRESS = {"best_val_score", "seed_val_score", "metric_calls", "iterations", "cost_usd"}
"""The result's fields that are the progress's as they stand when the search is over."""


def complete_with(
    result_type: type[R],
    session: Session,
    searched: Searched,
    test: HeldOutCheck | None,
    summarize: Callable[[R], str],
    **fields: Any,
) -> R:
    """The completed result (the search's and the progress's fields, ``test``, the kind's
    own ``fields``, and ``summarize``'s sentence), stored as the optimization's outcome."""
    progress = session.progress
    assert progress.best_val_score is not None and progress.seed_val_score is not None
    result = result_type(
        optimization_id=session.id,
        best_idx=searched.best_idx,
        best_candidate=searched.best,
        seed_candidate=searched.seed,
        status="completed",
        candidates=searched.candidates,
        stop_reason=searched.stop_reason,
        elapsed_s=session.elapsed_s,
        **progress.model_dump(include=_FROM_PROGRESS),
        test=test,
        **fields,
    )
    result = result.model_copy(update={"summary": summarize(result)})
    complete(session, result)
    return result
