"""``assay run``: a run from a YAML config and/or flags (flags win; see
``assay.operations.run_config.run_config_from``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.backend_flags import RayAddressFlag, WorkersFlag
from assay.cli.common import CliError, console, err_console
from assay.cli.option_parsing import run_request
from assay.cli.options import (
    DataOpt,
    DatasetOpt,
    FailUnderOpt,
    IdsOpt,
    ItemConcurrencyOpt,
    ItemLimitOpt,
    JsonPathOpt,
    MaxErrorsOpt,
    NameOpt,
    ProgressOpt,
    RepeatsOpt,
    ReportOpt,
    RequireCalibratedOpt,
    RunBackendOpt,
    RunConfigArg,
    RunGateOnOpt,
    SampleOpt,
    ScorerOpt,
    SeedOpt,
    StoreOpt,
    TargetOpt,
    ThresholdOpt,
    TimeoutOpt,
    VersionOpt,
)

if TYPE_CHECKING:
    from assay.operations.run_config import RunConfig
    from assay.operations.run_gates import RunGates
    from assay.runner.result import RunResult
    from assay.types import RunInfo, ScorerSpec


def run(
    config: RunConfigArg = None,
    data: DataOpt = None,
    dataset: DatasetOpt = None,
    version: VersionOpt = None,
    target: TargetOpt = None,
    scorers: ScorerOpt = None,
    concurrency: ItemConcurrencyOpt = None,
    repeats: RepeatsOpt = None,
    threshold: ThresholdOpt = None,
    timeout: TimeoutOpt = None,
    name: NameOpt = None,
    backend: RunBackendOpt = None,
    ray_address: RayAddressFlag = None,
    workers: WorkersFlag = None,
    store: StoreOpt = None,
    report: ReportOpt = None,
    json: JsonPathOpt = None,
    progress: ProgressOpt = None,
    fail_under: FailUnderOpt = None,
    gate_on: RunGateOnOpt = "mean",
    max_errors: MaxErrorsOpt = None,
    limit: ItemLimitOpt = None,
    sample: SampleOpt = None,
    seed: SeedOpt = None,
    ids: IdsOpt = None,
    require_calibrated: RequireCalibratedOpt = None,
) -> None:
    """Run data through a target and scorers; print the summary; keep the run (default).

    Exit codes: 0 passed; 1 a gate failed (every item failed, a scorer produced no score,
    --fail-under, --max-errors);
    2 bad input; 130 interrupted (the run can be resumed)."""
    flags = dict(locals())  # each named as the run config field it sets (run_request)
    from assay.operations.run_config import run_config
    from assay.runner.hooks import RunHooks

    cfg, gates = run_request(flags)
    started: list[RunInfo] = []
    try:
        result = run_config(cfg, progress=progress, hooks=RunHooks(on_run_start=started.append))
    except KeyboardInterrupt:
        _print_interrupted(started[0].id[:8] if started and cfg.store else None)
        raise typer.Exit(130) from None
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(str(exc)) from exc
    _print_result(result, cfg)
    _check_gates(gates, result)


def _check_gates(gates: RunGates, result: RunResult) -> None:
    """``--fail-under`` and ``--max-errors`` on the finished run: each failure on stderr,
    exit 1 when there is any."""
    from assay.analysis.gates import GateError

    try:
        failures = gates.failures(result.summary)
    except GateError as exc:
        raise CliError(str(exc)) from exc
    for failure in failures:
        err_console.print(f"gate failed: {failure.reason}", markup=False, soft_wrap=True)
    if failures:
        raise typer.Exit(1)


def _print_result(result: RunResult, cfg: RunConfig) -> None:
    """The summary table, the report files written, and for a stored run its id and its
    judge scorers' calibration."""
    from assay.analysis.report_terminal import summary_table
    from assay.operations.reports import write_run_reports

    console.print(summary_table(result.record))
    try:
        written = write_run_reports(
            result, report=cfg.report, json_path=cfg.json_path, stored=cfg.store
        )
    except (ValueError, OSError) as exc:
        raise CliError(str(exc)) from exc
    for path in written:
        console.print(f"wrote {path}", highlight=False)
    if cfg.store:
        hint = f"run {result.id} stored · `assay runs show {result.id[:8]}`"
        console.print(hint, highlight=False)
        _print_calibration(result.record.info.scorers)


def _print_interrupted(run_id: str | None) -> None:
    """What an interrupted run left: a stored run to resume, or nothing (``--no-store``)."""
    if run_id is not None:
        hint = f"`assay runs resume {run_id}` finishes run {run_id}"
    else:
        hint = "nothing was stored (--no-store)"
    err_console.print(f"interrupted: finished results are kept; {hint}", highlight=False)


def _print_calibration(specs: list[ScorerSpec]) -> None:
    """One ``calibrated: yes/no/stale`` line per judge scorer (and per scorer that was ever
    calibrated): whether its scores are backed by agreement with human labels."""
    from assay.calibration.certificates import shown_calibration_statuses

    for spec, status in shown_calibration_statuses(specs):
        console.print(f"{spec.id}: {status.describe()}", highlight=False)
