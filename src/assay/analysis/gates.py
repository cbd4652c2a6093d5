"""Gates: the checks that let a run fail a CI job, each with a reason a person can act on.

A run *fails* (exit code 1 from the CLI) when every item failed, when a scorer's mean (or
its confidence bound, ``on="ci"``) is on the wrong side of a ``--fail-under`` value, when
more items errored than ``--max-errors`` allows, or (for a comparison) when a scorer's
paired difference is a significant regression. Everything here is pure: it reads a
``RunSummary`` or a ``RunComparison`` and returns ``GateFailure`` records; the CLI decides
the exit code.

Direction: ``--fail-under toxicity=0.2`` on a lower-is-better scorer fails when the mean is
*above* 0.2 — the value is always the worst acceptable score, whichever way is better. With
``on="ci"`` the pessimistic end of the 95% bootstrap CI is used (the lower bound when higher
is better, the upper bound otherwise), so a gate passes only when the data are good enough
to be sure.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from assay.analysis.compare import RunComparison
from assay.types import RunRecord, RunSummary, ScorerSummary

GateOn = Literal["mean", "ci"]


class GateError(ValueError):
    """A gate is malformed (unknown scorer, bad value); the message names it."""


class GateFailure(BaseModel):
    """One failed gate: which, the measured value, the limit, and a one-line reason."""

    model_config = ConfigDict(frozen=True)

    gate: str
    scorer_id: str | None = None
    value: float | None = None
    limit: float | None = None
    reason: str


class MaxErrors(BaseModel):
    """``--max-errors N`` (a count) or ``N%`` (a share of the run's results)."""

    model_config = ConfigDict(frozen=True)

    count: int | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, text: str) -> MaxErrors:
        raw = text.strip()
        if not re.fullmatch(r"\d+(\.\d+)?%?", raw):
            raise GateError(f"--max-errors {text!r}: expected a count (5) or a share (2%)")
        if raw.endswith("%"):
            percent = float(raw[:-1])
            if percent > 100:
                raise GateError(f"--max-errors {text!r}: a share cannot exceed 100%")
            return cls(percent=percent)
        if "." in raw:
            raise GateError(f"--max-errors {text!r}: a count is a whole number")
        return cls(count=int(raw))

    def allowed(self, results: int) -> float:
        if self.count is not None:
            return float(self.count)
        return (self.percent or 0.0) / 100.0 * results

    def __str__(self) -> str:
        return f"{self.count}" if self.count is not None else f"{self.percent:g}%"


def parse_thresholds(pairs: Iterable[str]) -> dict[str, float]:
    """``["faithfulness=0.8", "toxicity=0.1"]`` → ``{"faithfulness": 0.8, ...}``."""
    parsed: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise GateError(f"--fail-under {pair!r}: expected SCORER=VALUE")
        try:
            parsed[name.strip()] = float(value)
        except ValueError:
            raise GateError(f"--fail-under {pair!r}: {value!r} is not a number") from None
    return parsed


def _scorer(summary: RunSummary, name: str) -> ScorerSummary:
    if name in summary.scorers:
        return summary.scorers[name]
    by_name = [s for s in summary.scorers.values() if s.scorer_label == name]
    if len(by_name) == 1:
        return by_name[0]
    close = difflib.get_close_matches(name, list(summary.scorers), n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    known = ", ".join(sorted(summary.scorers)) or "none"
    raise GateError(f"--fail-under: the run has no scorer {name!r}{hint} (scorers: {known})")


def check_run(
    summary: RunSummary,
    *,
    fail_under: Mapping[str, float] | None = None,
    on: GateOn = "mean",
    max_errors: MaxErrors | None = None,
) -> list[GateFailure]:
    """Every failed gate of a finished run (empty: the run passes)."""
    failures: list[GateFailure] = []
    if summary.results and summary.item_errors >= summary.results:
        failures.append(
            GateFailure(
                gate="all-failed",
                value=float(summary.item_errors),
                reason=f"every item failed ({summary.item_errors} of {summary.results} results)",
            )
        )
    else:
        failures.extend(_no_score(summary))
    for name, limit in (fail_under or {}).items():
        failures.extend(_fail_under(_scorer(summary, name), limit, on))
    if max_errors is not None:
        errors = summary.item_errors + sum(s.errors for s in summary.scorers.values())
        allowed = max_errors.allowed(summary.results)
        if errors > allowed:
            failures.append(
                GateFailure(
                    gate="max-errors",
                    value=float(errors),
                    limit=allowed,
                    reason=f"{errors} errors (target and scorer) exceed --max-errors "
                    f"{max_errors} of {summary.results} results",
                )
            )
    return failures


def _no_score(summary: RunSummary) -> list[GateFailure]:
    """A failure per scorer that produced no score over results that exist: a judge that
    errored on every item must not leave the run green (or its weighted score whole)."""
    if not summary.results:
        return []
    return [
        GateFailure(
            gate="no-score",
            scorer_id=s.scorer_id,
            reason=f"{s.scorer_id}: produced no score ({s.errors} errors, "
            f"{s.not_scorable} not scorable of {summary.results} results)",
        )
        for s in summary.scorers.values()
        if s.mean is None
    ]


def validate_thresholds(names: Iterable[str], scorers: Mapping[str, str]) -> None:
    """Raise ``GateError`` for a ``--fail-under`` name that matches none of ``scorers``
    (id -> label), before a run starts, so a typo costs nothing instead of a whole run."""
    for name in names:
        if name in scorers:
            continue
        if sum(1 for label in scorers.values() if label == name) == 1:
            continue
        close = difflib.get_close_matches(name, list(scorers), n=2, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        known = ", ".join(sorted(scorers)) or "none"
        raise GateError(f"--fail-under: the run has no scorer {name!r}{hint} (scorers: {known})")


def _fail_under(s: ScorerSummary, limit: float, on: GateOn) -> list[GateFailure]:
    higher = s.higher_is_better
    if on == "ci":
        value = s.ci_low if higher else s.ci_high
        what = "lower CI bound" if higher else "upper CI bound"
    else:
        value, what = s.mean, "mean"
    if value is None:
        return [
            GateFailure(
                gate="fail-under",
                scorer_id=s.scorer_id,
                limit=limit,
                reason=f"{s.scorer_id}: no {what} to check (no scores: {s.errors} errors, "
                f"{s.not_scorable} not scorable)",
            )
        ]
    bad = value < limit if higher else value > limit
    if not bad:
        return []
    side = "below" if higher else "above"
    return [
        GateFailure(
            gate="fail-under",
            scorer_id=s.scorer_id,
            value=value,
            limit=limit,
            reason=f"{s.scorer_id}: {what} {value:.4g} is {side} {limit:g} "
            f"({'higher' if higher else 'lower'} is better)",
        )
    ]


def check_complete(record: RunRecord, role: str) -> list[GateFailure]:
    """A failure when ``record`` is not a finished, complete run: an interrupted, failed or
    still-running candidate (killed part-way) compares only the items it reached, so a
    regression gate over it would pass on missing data."""
    done = record.summary.results if record.summary is not None else record.completed_results
    expected = (
        record.info.total_items * record.info.repeats
        if record.info.total_items is not None
        else None
    )
    if record.status == "completed" and (expected is None or done >= expected):
        return []
    of = f"{done} of {expected}" if expected is not None else f"{done}"
    state = record.status if record.status != "completed" else "partial"
    return [
        GateFailure(
            gate="incomplete",
            value=float(done),
            limit=float(expected) if expected is not None else None,
            reason=f"run {role} ({record.id[:8]}) is {state} ({of} results): a partial run "
            "cannot pass the gate; resume it (`assay runs resume`) or compare a complete run",
        )
    ]


def check_regressions(comparison: RunComparison) -> list[GateFailure]:
    """A failure per scorer whose paired difference is a significant regression."""
    return [
        GateFailure(
            gate="regression",
            scorer_id=s.scorer_id,
            value=s.delta,
            reason=f"{s.scorer_id}: significant regression, Δ {s.delta:+.4g} "
            f"(95% CI {s.ci_low:+.4g} to {s.ci_high:+.4g}, {s.n_paired} paired items)",
        )
        for s in comparison.scorers
        if s.verdict == "regressed"
        and s.delta is not None
        and s.ci_low is not None
        and s.ci_high is not None
    ]
