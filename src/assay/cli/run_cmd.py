"""``assay run``: a run from a YAML config and/or flags (flags win; see
``assay.operations.run_config.run_config_from``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay.cli.common import CliError, console, err_console

if TYPE_CHECKING:
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
    from assay.analysis.gates import GateError, MaxErrors, check_run, parse_thresholds
    from assay.analysis.report_terminal import summary_table
    from assay.operations.inputs import InputError, json_or_text, scorer_value
    from assay.operations.reports import write_run_reports
    from assay.operations.run_config import RunConfigError, run_config, run_config_from

    try:
        if gate_on not in ("mean", "ci"):
            raise GateError(f"--gate-on {gate_on!r}: expected 'mean' or 'ci'")
        thresholds = parse_thresholds(fail_under or [])
        error_budget = MaxErrors.parse(max_errors) if max_errors is not None else None
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
    except (RunConfigError, InputError) as exc:
        raise CliError(str(exc)) from exc
    if thresholds:
        from assay.analysis.gates import validate_thresholds
        from assay.runner.scorer_set import build_scorers

        try:  # a --fail-under typo must cost nothing, not a whole run's judge calls
            built = build_scorers(cfg.scorers)
            validate_thresholds(thresholds, {s.id: s.label for s in built})
        except (GateError, ValueError, TypeError, KeyError) as exc:
            raise CliError(str(exc)) from exc
    from assay.runner.hooks import RunHooks

    started: list[RunInfo] = []
    hooks = RunHooks(on_run_start=started.append)
    try:
        result = run_config(cfg, progress=progress, hooks=hooks)
    except KeyboardInterrupt:
        if started and cfg.store:
            run_id = started[0].id[:8]
            hint = f"`assay runs resume {run_id}` finishes run {run_id}"
        else:
            hint = "nothing was stored (--no-store)"
        err_console.print(f"interrupted: finished results are kept; {hint}", highlight=False)
        raise typer.Exit(130) from None
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(str(exc)) from exc
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
    try:
        failures = check_run(
            result.summary,
            fail_under=thresholds,
            on="ci" if gate_on == "ci" else "mean",
            max_errors=error_budget,
        )
    except GateError as exc:
        raise CliError(str(exc)) from exc
    for failure in failures:
        err_console.print(f"gate failed: {failure.reason}", markup=False, soft_wrap=True)
    if failures:
        raise typer.Exit(1)


def _print_calibration(specs: list[ScorerSpec]) -> None:
    """One ``calibrated: yes/no/stale`` line per judge scorer (and per scorer that was ever
    calibrated): whether its scores are backed by agreement with human labels."""
    from assay.calibration.certificates import is_judge_spec, spec_calibration_status

    for spec in specs:
        status = spec_calibration_status(spec)
        if status.state != "no" or is_judge_spec(spec):
            console.print(f"{spec.id}: {status.describe()}", highlight=False)
