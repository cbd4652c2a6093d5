"""``assay optimize CONFIG.yaml`` | ``assay optimize resume ID`` | ``assay optimize show ID``.

One command with a leading word rather than a Typer group: the issue's spelling is
``assay optimize CONFIG.yaml``, and a click group would read the config path as an unknown
subcommand. Progress goes to stderr (so ``--json`` keeps stdout clean), rendered from the
optimizer's typed events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from assay.cli.backend_flags import BackendFlag, RayAddressFlag, WorkersFlag, backend_options
from assay.cli.common import CliError, console, err_console, open_cli_store, when

if TYPE_CHECKING:
    from assay.optimize.config import Budget
    from assay.optimize.events import OptimizeEvent
    from assay.optimize.results import OptimizeResult

_WORDS = ("resume", "show")


def _budget_text(used: int, budget: Budget | None) -> str:
    limit = budget.max_metric_calls if budget is not None else None
    return f"{used}/{limit}" if limit else str(used)


class _Printer:
    """Renders events on stderr: iteration, metric calls and cost against the budget, best
    validation score so far, each new candidate's diff against its parent."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.budget: Budget | None = None
        self.proposed = 0
        self.reflections_failed = 0

    def __call__(self, event: OptimizeEvent) -> None:
        if event.kind == "proposed":
            self.proposed += 1
        elif event.kind == "reflection_failed":
            self.reflections_failed += 1
        if self.quiet:
            return
        out = err_console
        if event.kind == "started":
            from assay.optimize.config import Budget

            self.budget = Budget.model_construct(
                max_metric_calls=event.max_metric_calls,
                max_iterations=event.max_iterations,
                max_cost_usd=event.max_cost_usd,
                max_wall_time_s=event.max_wall_time_s,
            )
            verb = "resuming" if event.resumed else "optimization"
            out.print(
                f"[bold]{verb} {event.optimization_id}[/]: train {event.train_size}, "
                f"val {event.val_size}, test {event.test_size}"
            )
        elif event.kind == "iteration":
            cost = f"${event.cost_usd:.4f}"
            if self.budget is not None and self.budget.max_cost_usd:
                cost += f"/${self.budget.max_cost_usd:g}"
            its = str(event.iteration)
            if self.budget is not None and self.budget.max_iterations:
                its += f"/{self.budget.max_iterations}"
            best = "—" if event.best_val_score is None else f"{event.best_val_score:.3f}"
            out.print(
                f"[cyan]iteration {its}[/] · metric calls "
                f"{_budget_text(event.metric_calls, self.budget)} · cost {cost} · "
                f"best val {best} · {event.elapsed_s:.1f} s"
            )
        elif event.kind == "proposed":
            out.print(f"  proposed a new [bold]{escape(event.component)}[/]:")
            for line in event.diff.splitlines()[2:]:
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
                out.print(Text("    " + line, style=style))
        elif event.kind == "reflection_failed":
            out.print(Text(f"  reflection on {event.component} failed: {event.error}", "red"))
        elif event.kind == "candidate":
            mark = " [bold green]★ best[/]" if event.is_best else ""
            origin = (
                f" (from {event.parents[0]}, changed {', '.join(event.changed) or 'nothing'})"
                if event.parents
                else " (seed)"
            )
            out.print(f"  candidate {event.idx}{origin}: val {event.val_score:.3f}{mark}")
        elif event.kind == "rejected":
            out.print(
                f"  rejected: minibatch {event.child_score:.2f} ≤ parent {event.parent_score:.2f}"
            )
        elif event.kind == "test":
            out.print("checked the winner on the test split")


def _write_best(result: OptimizeResult, path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = json.dumps(result.best_candidate, indent=2, ensure_ascii=False) + "\n"
    elif suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(result.best_candidate, allow_unicode=True, sort_keys=False)
    else:
        text = result.best_prompt + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"--write-best {path}: {exc.strerror or exc}") from exc


def _check_writable(path: Path) -> None:
    """Fail before the search, not after it, when ``--write-best`` cannot be written."""
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise CliError(f"--write-best {path}: {exc.strerror or exc}") from exc
    if not existed:
        path.unlink(missing_ok=True)


def _report(result: OptimizeResult, as_json: bool, write_best: Path | None) -> None:
    if write_best is not None:
        _write_best(result, write_best)
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
        if write_best is not None:
            err_console.print(f"wrote {write_best}", highlight=False)
        return
    table = Table(title=f"optimization {result.optimization_id}", title_justify="left")
    table.add_column("")
    table.add_column("value")
    rows = [
        ("validation", f"{result.seed_val_score:.3f} → {result.best_val_score:.3f}"),
        ("best candidate", f"{result.best_idx} of {result.candidates}"),
        ("metric calls", str(result.metric_calls)),
        ("iterations", str(result.iterations)),
        ("cost", f"${result.cost_usd:.4f}"),
        ("stopped", result.stop_reason or "—"),
    ]
    test = result.test
    if test is not None and test.verdict != "best_is_seed":
        rows.append(("test", f"{test.seed_score:.3f} → {test.best_score:.3f} ({test.items} items)"))
        if test.ci_low is not None and test.ci_high is not None and test.delta is not None:
            rows.append(
                ("Δ (95% CI)", f"{test.delta:+.3f} [{test.ci_low:+.3f}, {test.ci_high:+.3f}]")
            )
        rows.append(("verdict", test.verdict))
    for key, value in rows:
        table.add_row(key, Text(value))
    console.print(table)
    console.print(Text(result.summary))
    if write_best is not None:
        console.print(f"wrote {write_best}", highlight=False)
    else:
        console.print(Text("best prompt:", style="bold"))
        console.print(Text(result.best_prompt))


def _show(ref: str, as_json: bool) -> None:
    from assay.optimize import show_optimization

    with open_cli_store() as store:
        try:
            view = show_optimization(ref, store=store)
        except LookupError as exc:
            raise CliError(str(exc).strip("'\"")) from exc
    if as_json:
        print(json.dumps(view.model_dump(mode="json"), indent=2))
        return
    record = view.optimization
    progress = record.progress
    console.print(
        Text(
            f"optimization {record.id} ({record.name or 'unnamed'}): {record.status}, "
            f"created {when(record.created_at)}; metric calls {progress.get('metric_calls', 0)}, "
            f"iterations {progress.get('iterations', 0)}, cost ${progress.get('cost_usd', 0.0):.4f}"
        )
    )
    if record.error:
        console.print(Text(f"error: {record.error}", style="red"))
    table = Table(title=f"{len(view.candidates)} candidate(s)", title_justify="left")
    for column in ("idx", "parents", "iteration", "changed", "val score"):
        table.add_column(column)
    for c in view.candidates:
        table.add_row(
            str(c.idx),
            ",".join(map(str, c.parents)) or "seed",
            str(c.iteration),
            Text(", ".join(c.changed)),
            "—" if c.val_score is None else f"{c.val_score:.3f}",
        )
    console.print(table)
    runs = [e for e in view.evaluations if e.run_id]
    console.print(
        f"{len(view.evaluations)} evaluation(s) stored as runs ({len(runs)} with a run id; "
        f"see `assay runs list`), {len(view.reflections)} reflection call(s)",
        highlight=False,
    )
    if record.result:
        console.print(Text(str(record.result.get("summary", ""))))


def optimize_command(
    args: Annotated[
        list[str],
        typer.Argument(
            help="CONFIG.yaml, or 'resume ID', or 'show ID'.",
            metavar="CONFIG.yaml | resume ID | show ID",
            show_default=False,
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    write_best: Annotated[
        Path | None,
        typer.Option(
            "--write-best",
            help="Write the best prompt here (.json/.yaml: its components; else the text).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    backend: BackendFlag = None,
    ray_address: RayAddressFlag = None,
    workers: WorkersFlag = None,
) -> None:
    """Optimize a prompt with GEPA, scored by assay scorers (budgeted, stored, resumable).

    --backend ray executes every evaluation batch (a stored run) on Ray workers."""
    from assay.optimize import (
        OptimizeConfigError,
        OptimizeResumeError,
        load_optimize_config,
        optimize,
        resume_optimization,
    )
    from assay.optimize.preflight import PreflightError, preflight

    if args[0] in _WORDS:
        if len(args) != 2:
            raise CliError(f"usage: assay optimize {args[0]} ID")
        if args[0] == "show":
            _show(args[1], as_json)
            return
    elif len(args) != 1:
        raise CliError("usage: assay optimize CONFIG.yaml | resume ID | show ID")
    scale_out = backend_options(backend, ray_address, workers)
    if write_best is not None:
        _check_writable(write_best)
    printer = _Printer(quiet)
    from assay.operations.ray_backend import RayBackendError

    with open_cli_store() as store:
        try:
            if args[0] == "resume":
                result = resume_optimization(args[1], on_event=printer, store=store, **scale_out)
            else:
                config = load_optimize_config(args[0])
                preflight(config)
                result = optimize(config, on_event=printer, store=store, **scale_out)
        except RayBackendError as exc:
            raise CliError(str(exc)) from exc
        except (OptimizeConfigError, OptimizeResumeError, PreflightError, LookupError) as exc:
            raise CliError(str(exc).strip("'\"")) from exc
    if printer.reflections_failed and not printer.proposed and result.best_val_score <= 0:
        err_console.print(
            f"optimization failed: all {printer.reflections_failed} reflection calls failed "
            "and no candidate scored above 0 (see `assay optimize show "
            f"{result.optimization_id[:8]}`); nothing was written",
            highlight=False,
        )
        raise typer.Exit(1)
    from assay.optimize.judge import JudgeOptimizeResult

    if isinstance(result, JudgeOptimizeResult):  # a resumed `assay optimize-judge`
        from assay.cli.optimize_judge import report_judge

        report_judge(result, "-" if as_json else None, write_best)
        return
    _report(result, as_json, write_best)
