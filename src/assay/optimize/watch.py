"""GEPA's callbacks and stop condition, wired to the session.

``Watcher`` records what GEPA decides (each kept candidate with its parents, iteration and
changed components; the metric calls used) and turns it into events. GEPA calls callbacks
inside a ``try`` that only logs a warning, so a failure here (a store write) would vanish;
the watcher keeps the first one and ``BudgetStopper`` stops the optimization on it, and the
optimizer raises it afterwards: nothing stored is silently lost.

``BudgetStopper`` is the one stop condition: metric calls, iterations, cost (task, judge
and reflection spend) and wall time (summed over every process that worked on the
optimization). GEPA checks it between iterations, so one iteration may overshoot.
"""

from __future__ import annotations

import time
from typing import Any

from gepa.core.state import GEPAState

from assay.optimize.candidate_target import candidate_hash
from assay.optimize.config import Budget
from assay.optimize.events import CandidateKept, CandidateRejected, IterationStarted
from assay.optimize.session import Session
from assay.store.optimizations_repo import CandidateRecord


class Watcher:
    """GEPA callback (duck-typed: GEPA looks each method up by name)."""

    def __init__(self, session: Session, known: dict[int, dict[str, str]]) -> None:
        self.session = session
        self.known = dict(known)
        self.error: BaseException | None = None

    def _guard(self, fn: Any, event: Any) -> None:
        try:
            fn(event)
        except BaseException as exc:
            if self.error is None:
                self.error = exc
            raise

    def on_iteration_start(self, event: Any) -> None:
        self._guard(self._iteration_start, event)

    def on_valset_evaluated(self, event: Any) -> None:
        self._guard(self._valset_evaluated, event)

    def on_candidate_rejected(self, event: Any) -> None:
        self._guard(self._candidate_rejected, event)

    def on_budget_updated(self, event: Any) -> None:
        self.session.progress.metric_calls = int(event["metric_calls_used"])

    def _iteration_start(self, event: Any) -> None:
        session = self.session
        state: GEPAState[Any, Any] = event["state"]
        session.iteration = int(event["iteration"])
        session.progress.iterations = session.iteration
        session.progress.metric_calls = int(state.total_num_evals)
        session.save_progress()
        session.emit(
            IterationStarted(
                optimization_id=session.id,
                iteration=session.iteration,
                metric_calls=session.progress.metric_calls,
                cost_usd=session.progress.cost_usd,
                elapsed_s=session.elapsed_s,
                best_val_score=session.progress.best_val_score,
            )
        )

    def _valset_evaluated(self, event: Any) -> None:
        session = self.session
        progress = session.progress
        idx = int(event["candidate_idx"])
        candidate = dict(event["candidate"])
        parents = [int(p) for p in event["parent_ids"] if p is not None]
        parent = self.known.get(parents[0]) if parents else None
        changed = (
            []
            if parent is None
            else [name for name, text in candidate.items() if parent.get(name) != text]
        )
        score = float(event["average_score"])
        self.known[idx] = candidate
        iteration = int(event["iteration"])
        session.store.optimizations.put_candidate(
            session.id,
            CandidateRecord(
                idx=idx,
                candidate_hash=candidate_hash(candidate),
                components=candidate,
                parents=parents,
                changed=changed,
                iteration=iteration,
                val_score=score,
                created_at=time.time(),
            ),
        )
        if idx == 0:
            progress.seed_val_score = score
        is_best = progress.best_val_score is None or score > progress.best_val_score
        if is_best:
            progress.best_val_score = score
            progress.best_idx = idx
        session.save_progress()
        session.emit(
            CandidateKept(
                optimization_id=session.id,
                iteration=iteration,
                idx=idx,
                parents=parents,
                changed=changed,
                val_score=score,
                best_val_score=progress.best_val_score or score,
                is_best=is_best,
                components=candidate,
            )
        )

    def _candidate_rejected(self, event: Any) -> None:
        self.session.emit(
            CandidateRejected(
                optimization_id=self.session.id,
                iteration=int(event["iteration"]),
                parent_score=float(event["old_score"]),
                child_score=float(event["new_score"]),
            )
        )


class BudgetStopper:
    """GEPA stop condition over the whole ``Budget`` (see the module docstring)."""

    def __init__(self, session: Session, budget: Budget, watcher: Watcher) -> None:
        self.session = session
        self.budget = budget
        self.watcher = watcher
        self.reason: str | None = None

    def __call__(self, gepa_state: GEPAState[Any, Any]) -> bool:
        self.reason = self._reason(gepa_state)
        return self.reason is not None

    def _reason(self, state: GEPAState[Any, Any]) -> str | None:
        budget, session = self.budget, self.session
        calls = int(state.total_num_evals)
        session.progress.metric_calls = calls
        if self.watcher.error is not None:
            return f"a callback failed: {self.watcher.error}"
        if session.failure is not None:
            return f"storing a step failed: {session.failure}"
        if session.stop_requested:
            return "stop requested"
        if budget.max_metric_calls is not None and calls >= budget.max_metric_calls:
            return f"max_metric_calls reached ({calls} ≥ {budget.max_metric_calls})"
        best = session.progress.best_val_score
        if session.config.stop_at_perfect and best is not None and best >= 1.0:
            return "a candidate scored 1.0 on validation (stop_at_perfect)"
        done = state.i + 1
        if budget.max_iterations is not None and done >= budget.max_iterations:
            return f"max_iterations reached ({done})"
        cost = session.progress.cost_usd
        if budget.max_cost_usd is not None and cost >= budget.max_cost_usd:
            return f"max_cost_usd reached (${cost:.4f} ≥ ${budget.max_cost_usd})"
        elapsed = session.elapsed_s
        if budget.max_wall_time_s is not None and elapsed >= budget.max_wall_time_s:
            return f"max_wall_time_s reached ({elapsed:.1f} s)"
        return None
