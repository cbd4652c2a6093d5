"""``assay calibrate``: a scorer against human labels, with CIs, gates and a certificate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.backend_flags import BackendFlag, RayAddressFlag, WorkersFlag
from assay.cli.common import CliError, console, err_console
from assay.cli.option_parsing import calibration_options
from assay.cli.option_parsing import parse_min as parse_min  # re-exported for old importers
from assay.cli.options import (
    CalibrationConfigArg,
    CalibrationGateOnOpt,
    CalibrationProgressOpt,
    CalibrationReportOpt,
    DisagreementsOpt,
    MinOpt,
    PpiOpt,
    RequireOpt,
    StatisticsJsonOpt,
)

if TYPE_CHECKING:
    from assay.calibration.results import CalibrationReport, ScorerCalibration


def calibrate(
    config: CalibrationConfigArg,
    json_out: StatisticsJsonOpt = None,
    min_: MinOpt = None,
    gate_on: CalibrationGateOnOpt = None,
    require: RequireOpt = None,
    disagreements: DisagreementsOpt = None,
    report: CalibrationReportOpt = None,
    progress: CalibrationProgressOpt = None,
    ppi: PpiOpt = None,
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
    from assay.calibration.run import calibrate as run_calibration
    from assay.store import StoreError

    options = calibration_options(min_, gate_on, require, backend, ray_address, workers)
    try:
        result = run_calibration(config, progress=progress, **options)
    except KeyboardInterrupt:
        err_console.print(_INTERRUPTED, highlight=False)
        raise typer.Exit(130) from None
    except (CalibrationConfigError, CalibrationDataError, StoreError) as exc:
        raise CliError(str(exc)) from exc
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(str(exc)) from exc
    data = result.to_json()
    if ppi is not None:
        data["judge_corrected"] = _print_judge_corrected(config, ppi)
    _print_tables(data)
    _write_files(result, data, json_out, disagreements, report)
    for scorer in result.scorers:
        _print_outcome(scorer)
    if not result.passed:
        raise typer.Exit(1)


_INTERRUPTED = (
    "interrupted: finished results are kept; `assay runs list` shows the calibration "
    "run and `assay runs resume ID` finishes it (run `assay calibrate` again for the "
    "statistics)"
)


def _print_judge_corrected(config: Path, run_id: str) -> dict[str, dict[str, object]]:
    """``--ppi``: each scorer's judge-corrected mean on stdout (its warning on stderr),
    returned for ``--json``."""
    from assay.calibration.report import judge_corrected_text

    corrected_means = _judge_corrected(config, run_id)
    for scorer_id, corrected in corrected_means.items():
        shown = judge_corrected_text(corrected)
        console.print(f"judge-corrected {scorer_id}: {shown}", highlight=False)
        if corrected.get("warning"):
            err_console.print(f"warning: {corrected['warning']}", highlight=False)
    return corrected_means


def _print_tables(data: dict[str, Any]) -> None:
    """The statistics tables, and the table of differences when the config compares."""
    from assay.calibration.report import calibration_tables, comparison_table

    for table in calibration_tables(data):
        console.print(table)
    differences = comparison_table(data)
    if differences is not None:
        console.print(differences)


def _write_files(
    result: CalibrationReport,
    data: dict[str, Any],
    json_path: str | None,
    disagreements_path: str | None,
    html_path: str | None,
) -> None:
    """``--json``, ``--disagreements`` and ``--report`` (those given), one line each."""
    from assay.calibration.report import write_calibration_files

    try:
        written = write_calibration_files(
            result,
            data,
            json_path=json_path or None,
            disagreements_path=disagreements_path or None,
            html_path=html_path or None,
        )
    except OSError as exc:
        raise CliError(f"cannot write output: {exc}") from exc
    for line in written:
        console.print(line, highlight=False)


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
