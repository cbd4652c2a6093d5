"""The gates of ``assay run`` (``--fail-under``, ``--gate-on``, ``--max-errors``): parsed and
checked against the run's scorers before the first item, judged on the finished summary.

Why before: a ``--fail-under`` naming no scorer of the run (a typo) must cost nothing, not
a whole run's judge calls; so the gates are checked twice, once against the scorers the
config builds and once against the summary. The rules themselves are ``analysis.gates``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.analysis.gates import (
    GateError,
    GateFailure,
    GateOn,
    MaxErrors,
    check_run,
    parse_thresholds,
    validate_thresholds,
)
from assay.types import RunSummary


@dataclass(frozen=True)
class RunGates:
    """What a finished run must clear: per-scorer minimums (``fail_under``, on the mean or
    the pessimistic CI bound), an error budget; every run also fails when every item failed
    or a scorer produced no score (``analysis.gates.check_run``)."""

    fail_under: dict[str, float] = field(default_factory=dict)
    on: GateOn = "mean"
    max_errors: MaxErrors | None = None

    @classmethod
    def parse(
        cls, fail_under: Sequence[str] = (), *, on: str = "mean", max_errors: str | None = None
    ) -> RunGates:
        """The gates of the CLI's words (``["faithfulness=0.8"]``, ``"ci"``, ``"5%"``);
        ``GateError`` names the flag that is wrong."""
        if on not in ("mean", "ci"):
            raise GateError(f"--gate-on {on!r}: expected 'mean' or 'ci'")
        return cls(
            fail_under=parse_thresholds(fail_under),
            on="ci" if on == "ci" else "mean",
            max_errors=MaxErrors.parse(max_errors) if max_errors is not None else None,
        )

    def check_scorers(self, scorers: Sequence[Any]) -> None:
        """Refuse a ``fail_under`` name that matches none of ``scorers`` (configs, as a run
        config holds them) before the run starts. Building the scorers may raise the
        scorer registry's ``ValueError``/``KeyError``/``TypeError`` too."""
        if not self.fail_under:
            return
        from assay.runner.scorer_set import build_scorers

        built = build_scorers(list(scorers))
        validate_thresholds(self.fail_under, {s.id: s.label for s in built})

    def failures(self, summary: RunSummary) -> list[GateFailure]:
        """Every gate the finished run failed (empty: it passed)."""
        return check_run(
            summary, fail_under=self.fail_under, on=self.on, max_errors=self.max_errors
        )
