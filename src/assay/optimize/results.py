"""What an optimization returns and stores: the winner and how it held up on held-out data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from assay.optimize.candidate_target import system_text

HeldOutVerdict = Literal[
    "improved", "regressed", "not_significant", "insufficient_data", "best_is_seed"
]


class ScorerVerdict(BaseModel):
    """One scorer's paired comparison seed → best on the test split (``runs compare``)."""

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    n_paired: int
    mean_seed: float | None
    mean_best: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str


class HeldOutCheck(BaseModel):
    """The seed and the best candidate on the test split, paired item by item.

    ``delta``/``ci_*`` are over the optimizer's own row score (the weighted mean of the
    normalized scorer scores; a failed row counts 0), with the paired bootstrap of
    ``runs compare``; ``scorers`` holds ``runs compare``'s per-scorer verdicts of the two
    stored runs. ``significant`` is true when the CI excludes zero.
    """

    model_config = ConfigDict(frozen=True)

    items: int
    seed_run_id: str | None
    best_run_id: str | None
    seed_score: float | None
    best_score: float | None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: HeldOutVerdict
    significant: bool = False
    scorers: list[ScorerVerdict] = []


class OptimizeResult(BaseModel):
    """The outcome of ``assay.optimize`` (also stored as the optimization's ``result``)."""

    model_config = ConfigDict(frozen=True)

    optimization_id: str
    status: str
    best_idx: int
    best_candidate: dict[str, str]
    seed_candidate: dict[str, str]
    best_val_score: float
    seed_val_score: float
    candidates: int
    metric_calls: int
    iterations: int
    cost_usd: float
    """Everything spent (priced models): search, reflection and the held-out check."""
    elapsed_s: float
    stop_reason: str | None = None
    test: HeldOutCheck | None = None
    summary: str = ""
    """One sentence: what was found and whether the held-out test confirms it."""

    @property
    def best_prompt(self) -> str:
        """The best candidate's system message, as the task model receives it."""
        return system_text(self.best_candidate)


def summarize(result: OptimizeResult) -> str:
    """The one-sentence verdict of ``result``."""
    head = (
        f"validation {result.seed_val_score:.3f} → {result.best_val_score:.3f} "
        f"(candidate {result.best_idx} of {result.candidates})"
    )
    test = result.test
    if test is None:
        return head + "; no test split: the improvement was not checked on held-out data"
    if test.verdict == "best_is_seed":
        return head + "; the best candidate is the seed, nothing to check on the test split"
    if test.verdict == "insufficient_data":
        return head + f"; test split ({test.items} items): too few items to tell"
    ci = f"[{test.ci_low:+.3f}, {test.ci_high:+.3f}]"
    word = {
        "improved": "a significant improvement",
        "regressed": "a significant regression",
        "not_significant": "not a significant difference",
    }[test.verdict]
    return (
        head + f"; test split ({test.items} items): {test.seed_score:.3f} → "
        f"{test.best_score:.3f}, Δ {test.delta:+.3f}, 95% CI {ci}: {word}"
    )
