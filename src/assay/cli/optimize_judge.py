"""``assay optimize-judge CONFIG.yaml``: a judge's prompt optimized against human labels.

Parse, call ``assay.optimize.judge.optimize_judge``, print. Exit codes: 0 when the gates
passed (a certificate was issued) or none were given; 1 when a gate was not met (no
certificate); 2 for a bad config or data. A killed run is resumed with
``assay optimize resume ID`` like any optimization.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from assay.cli.backend_flags import BackendFlag, RayAddressFlag, WorkersFlag, backend_options
from assay.cli.common import CliError, console, err_console, open_cli_store
from assay.cli.optimize import _check_writable, _Printer
from assay.cli.option_parsing import parse_min

if TYPE_CHECKING:
    from assay.optimize.judge import JudgeOptimizeResult, SplitStatistics

_SHOWN = {
    "binary": ("kappa", "mcc", "balanced_accuracy", "accuracy", "f1"),
    "ordinal": ("quadratic_weighted_kappa", "spearman", "kendall_tau_b", "mae"),
    "numeric": ("spearman", "pearson", "krippendorff_alpha_interval", "mae"),
    "pairwise": ("agreement", "position_bias_rate", "tie_rate"),
}


def _estimate(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("value") is None:
        return "—" if not entry else f"— ({entry.get('reason', 'undefined')})"
    text = f"{entry['value']:.3f}"
    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
        text += f" [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"
    return text


def _statistics_table(result: JudgeOptimizeResult) -> Table:
    table = Table(title="statistics (95% CI): seed → winner", title_justify="left")
    for column in ("statistic", "val seed", "val winner", "test seed", "test winner", "Δ test"):
        table.add_column(column)
    names = list(dict.fromkeys((result.objective, *_SHOWN.get(result.kind, ()))))
    for name in names:
        cells = []
        for split in (result.val, result.held_out):
            for side in ("seed", "best"):
                stats = getattr(split, side)["statistics"] if split is not None else {}
                cells.append(_estimate(stats.get(name)))
        cells.append(_estimate(result.difference.get(name)))
        table.add_row(name, *cells)
    return table


def _confusion(split: SplitStatistics | None) -> str | None:
    if split is None:
        return None
    parts = []
    for side, label in (("seed", "seed"), ("best", "winner")):
        matrix = getattr(split, side).get("confusion_matrix")
        if matrix is None:
            return None
        (tn, fp), (fn, tp) = matrix["matrix"]
        parts.append(f"{label}: TP {tp} FP {fp} FN {fn} TN {tn}")
    return "confusion on test (human rows × verdict): " + " | ".join(parts)


def _print(result: JudgeOptimizeResult) -> None:
    sizes = result.split_sizes
    console.print(
        Text(
            f"judge optimization {result.optimization_id}: {result.objective} "
            f"({result.kind}); train {sizes['train']}, val {sizes['val']}, test "
            f"{sizes['test']} items; {result.candidates} candidate(s), "
            f"{result.metric_calls} metric calls, ${result.cost_usd:.4f}"
        )
    )
    console.print(_statistics_table(result))
    confusion = _confusion(result.held_out)
    if confusion:
        console.print(Text(confusion))
    for gate in result.gates:
        mark = "passed" if gate.passed else "FAILED"
        console.print(Text(f"gate {mark}: {gate.reason}", style="green" if gate.passed else "red"))
    console.print(Text(result.summary))
    if result.certificate_id:
        console.print(Text(f"certificate {result.certificate_id} for {result.best_fingerprint}"))
    for name, text in result.best_candidate.items():
        console.print(Text(f"{name}:", style="bold"))
        console.print(Text(text))


def optimize_judge_command(
    config: Annotated[Path, typer.Argument(help="A judge-optimization config (YAML).")],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write the result as JSON here ('-': standard output)."),
    ] = None,
    min_: Annotated[
        list[str] | None,
        typer.Option(
            "--min",
            help="STAT=VALUE gate on the winner's held-out statistic (its lower 95% CI bound "
            "unless the config says gate_on: point), e.g. --min kappa=0.6. Repeatable; adds "
            "to the config's 'min'. A certificate is issued only when every gate passes.",
        ),
    ] = None,
    write_best: Annotated[
        Path | None,
        typer.Option("--write-best", help="Write the winning judge as a scorer config YAML."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    backend: BackendFlag = None,
    ray_address: RayAddressFlag = None,
    workers: WorkersFlag = None,
) -> None:
    """Optimize a judge scorer's prompt (instructions and step templates) with GEPA against
    human labels; check the winner on held-out items; certify it when the gates pass.

    Exit codes: 0 passed (or no gates); 1 a gate was not met (no certificate); 2 bad
    config or data."""
    from assay.extras import require_extra

    require_extra("calibration", "judge optimization")  # before a database is opened
    from assay.optimize.config import OptimizeConfigError
    from assay.optimize.judge import optimize_judge

    gates = parse_min(min_ or [])
    scale_out = backend_options(backend, ray_address, workers)
    if write_best is not None:
        _check_writable(write_best)
    printer = _Printer(quiet)
    from assay.operations.ray_backend import RayBackendError

    with open_cli_store() as store:
        try:
            result = optimize_judge(
                config,
                on_event=printer,
                store=store,
                **scale_out,
                **({"min": gates} if gates else {}),
            )
        except RayBackendError as exc:
            raise CliError(str(exc)) from exc
        except (OptimizeConfigError, LookupError) as exc:
            raise CliError(str(exc).strip("'\"")) from exc
    report_judge(result, json_out, write_best)


def report_judge(
    result: JudgeOptimizeResult, json_out: str | None, write_best: Path | None
) -> None:
    """Write ``--write-best``, print the result (or its JSON), and exit 1 when a gate was
    not met (also for ``assay optimize resume`` of a judge optimization)."""
    from assay.optimize.judge import write_best_scorer

    if write_best is not None:
        try:
            write_best_scorer(result, write_best)
        except OSError as exc:
            raise CliError(f"--write-best {write_best}: {exc.strerror or exc}") from exc
    data = result.model_dump(mode="json")
    if json_out == "-":
        print(json.dumps(data, indent=2))
    else:
        _print(result)
        if json_out is not None:
            try:
                Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            except OSError as exc:
                raise CliError(f"--json {json_out}: {exc.strerror or exc}") from exc
            err_console.print(f"wrote {json_out}", highlight=False)
    if write_best is not None:
        err_console.print(f"wrote {write_best}", highlight=False)
    if result.gates and not result.passed:
        raise typer.Exit(1)
