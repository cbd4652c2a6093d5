"""``assay_eval``: a dataset-level test, gated like ``assay run --fail-under``.

    def test_support_bot(assay_eval):
        assay_eval("examples/pytest/support.jsonl", "examples.pytest.bot:answer",
                   ["exact-match"], fail_under={"exact-match": 0.8})

The data (a file, rows, or a stored dataset ``name[@version]``) runs through the target and
scorers with the runner every run uses and, unless the session says ``--assay-no-store``,
straight into the store as a run named by the test and tagged with the session. The gates
are ``analysis.gates.check_run``'s: ``fail_under`` (the worst acceptable score per scorer,
direction-aware), ``gate_on="ci"`` (the pessimistic 95% bound instead of the mean),
``max_errors`` (a count or ``"5%"``), and a run whose every item failed fails.

With ``repeats=k``, ``require`` says how an item's repeats reduce before the gate (see
``analysis.repeats``): ``"mean"`` (default, as ``assay run``), ``"all"`` (the worst repeat:
for a 0/1 scorer the gated mean is pass^k) or ``"any"`` (the best: pass@k). pass^k, pass@k and
the flip rate at each scorer's limit are reported either way. Repeats bypass the model cache
(independent samples) unless ``reuse_cache=True``, and the report says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from assay.analysis.gates import GateFailure, GateOn, MaxErrors, check_run
from assay.analysis.repeats import (
    RepeatStats,
    Require,
    check_require,
    reduced_summary,
    repeat_stats,
)
from assay.runner.options import RunOptions
from assay.runner.result import RunResult
from assay.scoring.sync import run_sync
from assay.testing.case_params import load_cases, parse_source
from assay.types import RunRecord, RunSummary, ScoreRow

if TYPE_CHECKING:
    import pytest


class EvalReport(BaseModel):
    """What ``assay_eval`` measured and decided."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    record: RunRecord
    stored: bool
    require: Require
    gate_on: GateOn
    fail_under: dict[str, float] = Field(default_factory=dict)
    repeats: dict[str, RepeatStats] = Field(default_factory=dict)
    failures: list[GateFailure] = Field(default_factory=list)
    cache_reused: bool = False

    @property
    def passed(self) -> bool:
        return not self.failures

    def describe(self) -> str:
        """One line per scorer: mean ± CI, limit, and with repeats pass^k/pass@k/flips."""
        lines = []
        summary = self.record.summary
        k = self.record.info.repeats
        for key, s in (summary.scorers if summary else {}).items():
            st = self.repeats.get(key)
            mean, low, high = s.mean, s.ci_low, s.ci_high
            if st is not None and self.require != "mean":
                mean, low, high = st.mean, st.ci_low, st.ci_high
            ci = f" (95% CI {low:.4g}..{high:.4g})" if low is not None and high is not None else ""
            line = f"{key}: mean {_fmt(mean)}{ci}"
            if key in self.fail_under:
                line += f", limit {self.fail_under[key]:g} on the {self.gate_on}"
            if k > 1 and st is not None:
                line += f", require={self.require!r} over {k} repeats"
                if st.limit is not None:
                    line += (
                        f": pass^{k} {_pct(st.pass_all)}, pass@{k} {_pct(st.pass_any)}, "
                        f"flip rate {_pct(st.flip_rate)} at {st.limit:g}"
                    )
            lines.append(line)
        if k > 1:
            lines.append(f"model cache {'reused' if self.cache_reused else 'bypassed'} for repeats")
        return "; ".join(lines)

    def message(self) -> str:
        head = "; ".join(f.reason for f in self.failures) or "passed"
        where = f"run {self.record.id[:8]}" + (" (stored)" if self.stored else "")
        return f"{head} [{where}: {self.describe()}]"


def _fmt(value: float | None) -> str:
    return "none" if value is None else f"{value:.4g}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


class AssayEval:
    """The ``assay_eval`` fixture's value: call it once or more in a test."""

    def __init__(self, node: pytest.Item) -> None:
        self.node = node

    def __call__(
        self,
        data: str | Path | Iterable[Any],
        target: Any = None,
        scorers: Sequence[Any] | None = None,
        *,
        fail_under: Mapping[str, float] | None = None,
        gate_on: GateOn = "mean",
        max_errors: int | str | None = None,
        repeats: int = 1,
        require: Require = "mean",
        reuse_cache: bool = False,
        threshold: float | None = None,
        concurrency: int = 8,
        timeout_s: float | None = None,
        name: str | None = None,
    ) -> EvalReport:
        """Run ``data`` through ``target`` and ``scorers``, store the run, check the gates;
        ``AssertionError`` with every failed gate's reason when one fails."""
        from assay.testing.session import session_for, test_group

        if gate_on not in ("mean", "ci"):
            raise ValueError(f"gate_on={gate_on!r}: expected 'mean' or 'ci'")
        rule = check_require(require)
        budget = MaxErrors.parse(str(max_errors)) if max_errors is not None else None
        limits = {str(k): float(v) for k, v in (fail_under or {}).items()}
        session = session_for(self.node.config)
        storing = session is not None and session.storing
        options = RunOptions(
            concurrency=concurrency,
            repeats=repeats,
            threshold=threshold,
            timeout_s=timeout_s,
            progress=False,
            name=name or test_group(self.node),
            tags=session.tags if session is not None and storing else (),
            metadata={"pytest": {"test": self.node.nodeid}},
        )
        fresh = repeats > 1 and not reuse_cache
        db = session.store() if session is not None and storing else None
        result = run_sync(lambda: _run(data, target, scorers, options, db, fresh))
        record = result.record
        if db is not None:
            record = db.runs.get(record.id)
            rows: Iterable[ScoreRow] = db.runs.score_rows(record.id)
            assert session is not None
            session.record_run(record.id)
        else:
            rows = _rows(result)
        summary = record.summary
        assert summary is not None
        check_run(summary, fail_under=limits)  # unknown scorer names fail here, named
        ids = {_scorer_id(summary, k): v for k, v in limits.items()}
        directions = {key: s.higher_is_better for key, s in summary.scorers.items()}
        pass_limits = {key: ids.get(key, s.threshold) for key, s in summary.scorers.items()}
        stats = repeat_stats(rows, directions, limits=pass_limits, require=rule)
        gated = reduced_summary(summary, stats)
        failures = check_run(gated, fail_under=limits, on=gate_on, max_errors=budget)
        report = EvalReport(
            record=record,
            stored=db is not None,
            require=rule,
            gate_on=gate_on,
            fail_under=ids,
            repeats=stats,
            failures=failures,
            cache_reused=repeats > 1 and reuse_cache,
        )
        _add_properties(self.node, report)
        if failures:
            raise AssertionError(report.message())
        return report


def _scorer_id(summary: RunSummary, name: str) -> str:
    if name in summary.scorers:
        return name
    return next(k for k, s in summary.scorers.items() if s.scorer_label == name)


async def _run(
    data: Any, target: Any, scorers: Any, options: RunOptions, db: Any, fresh: bool
) -> RunResult:
    from assay.models.cache import fresh_samples

    if not fresh:
        return await _dispatch(data, target, scorers, options, db)
    with fresh_samples():
        return await _dispatch(data, target, scorers, options, db)


async def _dispatch(
    data: Any, target: Any, scorers: Any, options: RunOptions, db: Any
) -> RunResult:
    from assay.runner.api import run_evals_async

    stored = parse_source(data) if isinstance(data, str | Path) else None
    if db is None:
        rows = load_cases(data) if stored is not None else data
        return await run_evals_async(rows, target, scorers, options=options)
    from assay.operations.stored_runs import run_dataset_async, run_stored_async

    if stored is not None:
        name, version = stored
        return await run_dataset_async(
            name, target, scorers, version=version, store=db, options=options
        )
    return await run_stored_async(data, target, scorers, store=db, options=options)


def _rows(result: RunResult) -> list[ScoreRow]:
    return [
        ScoreRow(r.item_id, r.position, r.repeat, s.scorer_id, s.status, s.score)
        for r in result.results
        for s in r.scores.values()
    ]


def _add_properties(node: Any, report: EvalReport) -> None:
    """``assay.run`` and ``assay.<scorer>.<field>`` JUnit properties of a dataset test."""
    props: list[tuple[str, object]] = node.user_properties
    props.append(("assay.run", report.record.id))
    summary = report.record.summary
    for key, s in (summary.scorers if summary else {}).items():
        props.append((f"assay.{key}.mean", _fmt(s.mean)))
        if s.ci_low is not None and s.ci_high is not None:
            props.append((f"assay.{key}.ci", f"{s.ci_low:.4g}..{s.ci_high:.4g}"))
        if key in report.fail_under:
            props.append((f"assay.{key}.fail_under", f"{report.fail_under[key]:g}"))
        st = report.repeats.get(key)
        if st is not None and st.repeats > 1 and st.limit is not None:
            props.append((f"assay.{key}.pass_all", _fmt(st.pass_all)))
            props.append((f"assay.{key}.pass_any", _fmt(st.pass_any)))
            props.append((f"assay.{key}.flip_rate", _fmt(st.flip_rate)))
    for failure in report.failures:
        props.append(("assay.gate_failed", failure.reason))
