"""``assay calibrate``: a scorer against human labels, with CIs, gates and a certificate."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay.cli.backend_flags import BackendFlag, RayAddressFlag, WorkersFlag, backend_options
from assay.cli.common import CliError, console, err_console

if TYPE_CHECKING:
    from assay.calibration.results import ScorerCalibration

_GATE_HELP = (
    "METRIC=VALUE: exit 1 when the statistic's lower 95% CI bound (--gate-on ci, the "
    "default) or its estimate (--gate-on point) is below VALUE, e.g. --min kappa=0.6. "
    "Repeatable; adds to the config's 'min'."
)


def parse_min(values: list[str]) -> dict[str, float]:
    """``["kappa=0.6"]`` → ``{"kappa": 0.6}``; a malformed one raises ``CliError``."""
    gates: dict[str, float] = {}
    for text in values:
        name, sep, raw = text.partition("=")
        try:
            bound = float(raw)
        except ValueError:
            bound = math.nan
        if not sep or not name.strip() or not math.isfinite(bound):
            raise CliError(f"--min {text!r}: expected METRIC=NUMBER, e.g. --min kappa=0.6")
        gates[name.strip()] = bound
    return gates


def calibrate(
    config: Annotated[Path, typer.Argument(help="A calibration config (YAML).")],
    json_out: Annotated[
        str | None, typer.Option("--json", help="Write every statistic with its CI here.")
    ] = None,
    min_: Annotated[list[str] | None, typer.Option("--min", help=_GATE_HELP)] = None,
    gate_on: Annotated[
        str | None,
        typer.Option(
            "--gate-on",
            help="What --min checks: 'ci' (the lower 95% CI bound; default) or 'point'.",
        ),
    ] = None,
    require: Annotated[
        list[str] | None,
        typer.Option(
            "--require",
            help="STATISTIC: exit 1 unless this statistic is defined with a CI (e.g. roc_auc "
            "is undefined when the humans used one class only); an unknown name exits 2 before "
            "the first judge call. Repeatable; adds to the config's 'require'.",
        ),
    ] = None,
    disagreements: Annotated[
        str | None,
        typer.Option(
            "--disagreements",
            help="Write the most-disagreeing items (input, output, label, score, reason) as a "
            "JSONL dataset file for `assay datasets import`.",
        ),
    ] = None,
    report: Annotated[
        str | None, typer.Option("--report", help="Write an HTML report with the calibration.")
    ] = None,
    progress: Annotated[
        bool | None,
        typer.Option("--progress/--no-progress", help="Show a progress bar (default: terminal)."),
    ] = None,
    ppi: Annotated[
        str | None,
        typer.Option(
            "--ppi",
            help="RUN: the judge-corrected (PPI++) mean of each scorer of this stored run, from "
            "its items that carry the config's label; printed and written as 'judge_corrected' "
            "in --json.",
        ),
    ] = None,
    backend: BackendFlag = None,
    ray_address: RayAddressFlag = None,
    workers: WorkersFlag = None,
) -> None:
    """Calibrate a scorer against human labels: every statistic with a bootstrap 95% CI,
    stored as a run plus a certificate bound to the scorer's fingerprint.

    Gates: --min kappa=0.6 fails when the lower CI bound is below 0.6 (--gate-on point: the
    estimate). With a 'split' in the config the gates judge the held-out test split.

    The certificate passes only when it has gates and every one passed; one without gates
    is "no gates" and `assay run --require-calibrated` refuses it.

    Exit codes: 0 every gate passed; 1 a gate failed; 2 bad input (config, data, labels);
    130 interrupted."""
    from assay.calibration.config import CalibrationConfigError
    from assay.calibration.data import CalibrationDataError
    from assay.calibration.report import (
        calibration_tables,
        comparison_table,
        judge_corrected_text,
        write_calibration_files,
    )
    from assay.calibration.run import calibrate as run_calibration
    from assay.store import StoreError

    if gate_on is not None and gate_on not in ("ci", "point"):
        raise CliError(f"--gate-on {gate_on!r}: expected 'ci' or 'point'")
    gates = parse_min(min_ or [])
    scale_out = backend_options(backend, ray_address, workers)
    try:
        extra = {"require": list(require)} if require else {}
        result = run_calibration(
            config, min=gates or None, gate_on=gate_on, progress=progress, **scale_out, **extra
        )
    except KeyboardInterrupt:
        err_console.print(
            "interrupted: finished results are kept; `assay runs list` shows the calibration "
            "run and `assay runs resume ID` finishes it (run `assay calibrate` again for the "
            "statistics)",
            highlight=False,
        )
        raise typer.Exit(130) from None
    except (CalibrationConfigError, CalibrationDataError, StoreError) as exc:
        raise CliError(str(exc)) from exc
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(str(exc)) from exc
    data = result.to_json()
    if ppi is not None:
        data["judge_corrected"] = _judge_corrected(config, ppi)
        for scorer_id, corrected in data["judge_corrected"].items():
            shown = judge_corrected_text(corrected)
            console.print(f"judge-corrected {scorer_id}: {shown}", highlight=False)
            if corrected.get("warning"):
                err_console.print(f"warning: {corrected['warning']}", highlight=False)
    for table in calibration_tables(data):
        console.print(table)
    differences = comparison_table(data)
    if differences is not None:
        console.print(differences)
    try:
        written = write_calibration_files(
            result,
            data,
            json_path=json_out or None,
            disagreements_path=disagreements or None,
            html_path=report or None,
        )
    except OSError as exc:
        raise CliError(f"cannot write output: {exc}") from exc
    for line in written:
        console.print(line, highlight=False)
    for scorer in result.scorers:
        _print_outcome(scorer)
    if not result.passed:
        raise typer.Exit(1)


def _print_outcome(scorer: ScorerCalibration) -> None:
    """One scorer's run and certificate on stdout; its item errors and failed gates on
    stderr."""
    certificate = scorer.certificate.id[:8] if scorer.certificate else "—"
    console.print(
        f"{scorer.scorer_id}: run {scorer.run_id} stored · certificate {certificate}",
        highlight=False,
    )
    if scorer.errors:
        first = scorer.errors[0]
        err_console.print(
            f"{scorer.scorer_id}: {len(scorer.errors)} item error(s), left out of the "
            f"statistics; first: item {first['item_id']}: {first['error']}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for gate in scorer.gates:
        if not gate.passed:
            err_console.print(
                f"gate failed: {scorer.scorer_id}: {gate.reason}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def _judge_corrected(config: Path, run_id: str) -> dict[str, dict[str, object]]:
    """``judge_corrected_means`` of a stored run with the config's label, label_map and
    label_range (a bad run id or label is a ``CliError``)."""
    from assay.calibration.config import load_calibration_config
    from assay.calibration.judge_corrected import judge_corrected_for_config
    from assay.store import StoreError

    cfg = load_calibration_config(config)
    try:
        return judge_corrected_for_config(cfg, run_id)
    except (StoreError, ValueError, LookupError) as exc:
        raise CliError(f"--ppi {run_id!r}: {exc}") from exc
