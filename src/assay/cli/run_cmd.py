"""``assay run``: a run from a YAML config and/or flags (flags win; see
``assay.operations.run_config.run_config_from``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay.cli.common import CliError, console, err_console

if TYPE_CHECKING:
    from assay.operations.run_config import RunConfig
    from assay.runner.result import RunResult
    from assay.types import RunInfo, ScorerSpec


def run(
    config: Annotated[
        Path | None, typer.Argument(help="A run config (YAML). Flags override its fields.")
    ] = None,
    data: Annotated[str | None, typer.Option("--data", help="A data file.")] = None,
    dataset: Annotated[str | None, typer.Option("--dataset", help="A stored dataset.")] = None,
    version: Annotated[int | None, typer.Option("--version", help="Dataset version.")] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="pkg.module:attr, or a JSON target config.")
    ] = None,
    scorer: Annotated[
        list[str] | None,
        typer.Option(
            "--scorer",
            "-s",
            help="Scorer type id, JSON config, or a scorer config YAML file (repeatable).",
        ),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-c", help="Items in flight at once (default 8).")
    ] = None,
    repeats: Annotated[
        int | None, typer.Option("--repeats", help="Times each item runs (default 1).")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="Pass level 0..1 on each scorer's normalized scale (0 worst, 1 best); a "
            "scorer config's own 'threshold' is on its own scale and wins.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds per item for the target call and for each scorer call (default: none).",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="A name for the run.")] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help="'local' (default) or 'ray': score on Ray workers over the store "
            "(pip install 'assay[ray]'; docs/scale-out.md).",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray cluster to join (default: start a local Ray)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Ray workers (default: the cluster's CPUs).")
    ] = None,
    store: Annotated[
        bool | None, typer.Option("--store/--no-store", help="Keep the run in the database.")
    ] = None,
    report: Annotated[str | None, typer.Option("--report", help="Write an HTML report.")] = None,
    json_out: Annotated[str | None, typer.Option("--json", help="Write JSON results.")] = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress", help="Show a progress bar (default: on a terminal)."
        ),
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            help="SCORER=VALUE: exit 1 when the scorer's mean is on the bad side of VALUE "
            "(below it, or above it for lower-is-better scorers). Repeatable.",
        ),
    ] = None,
    gate_on: Annotated[
        str,
        typer.Option(
            "--gate-on",
            help="What --fail-under checks: 'mean', or 'ci' (the pessimistic 95% CI bound).",
        ),
    ] = "mean",
    max_errors: Annotated[
        str | None,
        typer.Option(
            "--max-errors",
            help="Exit 1 when more than N results (or P% of them) have a target or scorer error.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Run at most the first N items (a smoke test).")
    ] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", help="Run a random sample of N items (see --seed).")
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="Seed of --sample (default 0): same seed, same items."),
    ] = None,
    ids: Annotated[
        str | None, typer.Option("--ids", help="Run only these item ids, comma-separated: a,b.")
    ] = None,
    require_calibrated: Annotated[
        bool | None,
        typer.Option(
            "--require-calibrated",
            help="Stop before the first item (exit 2) unless every scorer has a passing "
            "calibration certificate matching its current prompt, model and params.",
        ),
    ] = None,
) -> None:
    """Run data through a target and scorers; print the summary; keep the run (default).

    Exit codes: 0 passed; 1 a gate failed (every item failed, a scorer produced no score,
    --fail-under, --max-errors);
    2 bad input; 130 interrupted (the run can be resumed)."""
    from assay.analysis.gates import GateError
    from assay.operations.inputs import InputError, json_or_text, scorer_value
    from assay.operations.run_config import RunConfigError, run_config, run_config_from
    from assay.operations.run_gates import RunGates
    from assay.runner.hooks import RunHooks

    try:
        gates = RunGates.parse(fail_under or [], on=gate_on, max_errors=max_errors)
    except GateError as exc:
        raise CliError(str(exc)) from exc
    try:
        cfg = run_config_from(
            config,
            data=data,
            dataset=dataset,
            version=version,
            target=json_or_text(target, option="--target", strict=True),
            scorers=[scorer_value(s) for s in scorer] if scorer else None,
            concurrency=concurrency,
            repeats=repeats,
            threshold=threshold,
            timeout=timeout,
            name=name,
            store=store,
            report=report,
            json=json_out,
            require_calibrated=require_calibrated,
            limit=limit,
            sample=sample,
            seed=seed,
            ids=ids,
            backend=backend,
            ray_address=ray_address,
            workers=workers,
        )
        gates.check_scorers(cfg.scorers)
    except (RunConfigError, InputError, GateError, ValueError, TypeError, KeyError) as exc:
        raise CliError(str(exc)) from exc

    started: list[RunInfo] = []
    try:
        result = run_config(cfg, progress=progress, hooks=RunHooks(on_run_start=started.append))
    except KeyboardInterrupt:
        _print_interrupted(started[0].id[:8] if started and cfg.store else None)
        raise typer.Exit(130) from None
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(str(exc)) from exc

    _print_result(result, cfg)
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
