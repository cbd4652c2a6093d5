"""Check the winner on data it was not selected on.

GEPA picks the best candidate by its validation score, so that score is optimistic (it is
the maximum over many candidates). The honest number is the test split's: the seed and the
best candidate both run on it as stored runs, and their per-item scores are compared
pairwise with the paired bootstrap that ``runs compare`` uses (same items, so the CI of the
mean difference is much tighter than two separate CIs). The improvement is significant
only when that CI excludes zero.
"""

from __future__ import annotations

import numpy as np

from assay.analysis.compare import compare_runs
from assay.optimize.candidate_target import candidate_hash
from assay.optimize.results import HeldOutCheck, HeldOutVerdict, ScorerVerdict
from assay.optimize.session import Session
from assay.optimize.splits import Example
from assay.summary.stats import bootstrap_mean_ci


def _verdict(ci: tuple[float, float] | None) -> HeldOutVerdict:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0:
        return "improved"
    if ci[1] < 0:
        return "regressed"
    return "not_significant"


async def check_held_out(
    session: Session, test: list[Example], seed: dict[str, str], best: dict[str, str]
) -> HeldOutCheck | None:
    """Seed vs best on ``test`` (``None`` without a test split)."""
    if not test:
        return None
    seed_eval = await session.evaluate(test, seed)
    session.emit(seed_eval.event)
    if candidate_hash(seed) == candidate_hash(best):
        return HeldOutCheck(
            items=len(test),
            seed_run_id=seed_eval.run_id,
            best_run_id=seed_eval.run_id,
            seed_score=seed_eval.mean_score,
            best_score=seed_eval.mean_score,
            verdict="best_is_seed",
        )
    best_eval = await session.evaluate(test, best)
    session.emit(best_eval.event)
    deltas = np.array(
        [b.score - a.score for a, b in zip(seed_eval.rows, best_eval.rows, strict=True)],
        dtype=np.float64,
    )
    ci = bootstrap_mean_ci(deltas, seed=session.config.seed)
    verdict = _verdict(ci)
    scorers: list[ScorerVerdict] = []
    if seed_eval.run_id and best_eval.run_id:
        runs = session.store.runs
        a, b = runs.get(seed_eval.run_id), runs.get(best_eval.run_id)
        comparison = compare_runs(a, runs.score_rows(a.id), b, runs.score_rows(b.id))
        scorers = [
            ScorerVerdict(
                scorer_id=s.scorer_id,
                n_paired=s.n_paired,
                mean_seed=s.mean_a,
                mean_best=s.mean_b,
                delta=s.delta,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                verdict=s.verdict,
            )
            for s in comparison.scorers
        ]
    return HeldOutCheck(
        items=len(test),
        seed_run_id=seed_eval.run_id,
        best_run_id=best_eval.run_id,
        seed_score=seed_eval.mean_score,
        best_score=best_eval.mean_score,
        delta=float(deltas.mean()),
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        verdict=verdict,
        significant=verdict in ("improved", "regressed"),
        scorers=scorers,
    )
