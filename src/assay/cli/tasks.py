"""``assay tasks validate|list|run``: lm-evaluation-harness-style benchmark tasks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from assay.cli.backend_flags import BackendFlag, RayAddressFlag, WorkersFlag
from assay.cli.common import CliError, console, err_console, print_json
from assay.cli.option_parsing import chat_options, task_run_options
from assay.cli.options import (
    ApplyChatTemplateOpt,
    BaseUrlOpt,
    BootstrapItersOpt,
    DocConcurrencyOpt,
    DocLimitOpt,
    DocsOpt,
    FewshotAsMultiturnOpt,
    ModelOpt,
    NameOpt,
    NumFewshotOpt,
    PredictionsOpt,
    StoreFlag,
    SystemInstructionOpt,
    TaskFileArg,
    TaskJsonOpt,
)

if TYPE_CHECKING:
    from assay.operations.tasks import GroupRun, TaskRun

tasks_app = typer.Typer(
    help="Benchmark tasks in lm-evaluation-harness YAML.", no_args_is_help=False
)


@tasks_app.command("validate")
def tasks_validate(
    file: Annotated[Path, typer.Argument(help="A task or group YAML.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Load a task YAML (includes, !function, filters, metrics) and report every problem
    with its file and key. Exit 0 when it is valid, 2 when it is not."""
    from assay.tasks.config import GroupConfig
    from assay.tasks.errors import TaskConfigError
    from assay.tasks.yaml_loader import load_task_config

    try:
        config = load_task_config(file)
    except (TaskConfigError, OSError) as exc:
        if json_out:
            print_json({"file": str(file), "valid": False, "error": str(exc)})
            raise typer.Exit(2) from None
        raise CliError(str(exc)) from exc
    if isinstance(config, GroupConfig):
        summary: dict[str, Any] = {
            "file": str(file),
            "valid": True,
            "group": config.group,
            "tasks": config.task_names(),
        }
    else:
        summary = {
            "file": str(file),
            "valid": True,
            "task": config.task,
            "output_type": config.output_type,
            "filters": [p.name for p in config.pipelines()],
            "metrics": [e.name for e in config.metric_entries()],
            "unsupported": config.unsupported_features(),
        }
    if json_out:
        print_json(summary)
        return
    what = f"group {summary['group']}" if "group" in summary else f"task {summary['task']}"
    console.print(f"{file}: valid ({what})", highlight=False)
    if "task" in summary:
        console.print(
            f"output_type {summary['output_type']} · filters {', '.join(summary['filters'])} "
            f"· metrics {', '.join(summary['metrics'])}",
            highlight=False,
        )


@tasks_app.command("list")
def tasks_list(
    directory: Annotated[Path, typer.Argument(help="A directory of task YAMLs (searched deeply).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the tasks and groups in a directory; files that do not load are listed with
    their error (exit 1 when there is any)."""
    from assay.tasks.yaml_loader import discover_tasks

    if not directory.is_dir():
        raise CliError(f"{directory}: not a directory")
    entries = discover_tasks(directory)
    rows: list[dict[str, Any]] = [
        {
            "name": e.name,
            "kind": e.kind,
            "output_type": e.output_type,
            "tags": list(e.tags),
            "groups": list(e.groups),
            "file": str(e.file),
            "error": e.error,
        }
        for e in entries
    ]
    if json_out:
        print_json(rows)
    else:
        table = Table(title=f"tasks in {directory}")
        for column in ("name", "kind", "output type", "groups", "file", "error"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                row["name"] or "—",
                row["kind"],
                row["output_type"] or "—",
                ", ".join(row["groups"]) or "—",
                row["file"],
                row["error"] or "",
            )
        console.print(table)
    if any(row["error"] for row in rows):
        raise typer.Exit(1)


@tasks_app.command("run")
def tasks_run(
    file: TaskFileArg,
    model: ModelOpt = None,
    limit: DocLimitOpt = None,
    num_fewshot: NumFewshotOpt = None,
    docs: DocsOpt = None,
    predictions: PredictionsOpt = None,
    json_path: TaskJsonOpt = None,
    base_url: BaseUrlOpt = None,
    concurrency: DocConcurrencyOpt = None,
    bootstrap_iters: BootstrapItersOpt = 100_000,
    store: StoreFlag = True,
    name: NameOpt = None,
    apply_chat_template: ApplyChatTemplateOpt = False,
    fewshot_as_multiturn: FewshotAsMultiturnOpt = None,
    system_instruction: SystemInstructionOpt = None,
    backend: BackendFlag = None,
    ray_address: RayAddressFlag = None,
    workers: WorkersFlag = None,
) -> None:
    """Run a task on a model, or score recorded predictions, and print lm-eval's aggregates.

    Exit codes: 0 every doc scored; 1 some docs failed (the aggregates leave them out and
    say so); 2 bad input."""
    from assay.operations.ray_backend import RayBackendError
    from assay.operations.tasks import TaskRun, TaskRunError, run_task_file
    from assay.tasks.errors import TaskConfigError

    options = task_run_options(
        store=store,
        concurrency=concurrency,
        name=name,
        backend=backend,
        ray_address=ray_address,
        workers=workers,
    )
    chat = chat_options(apply_chat_template, fewshot_as_multiturn, system_instruction)
    try:
        outcome = run_task_file(
            file,
            model=model,
            predictions=predictions,
            docs=docs,
            limit=limit,
            num_fewshot=num_fewshot,
            bootstrap_iters=bootstrap_iters,
            stored=store,
            base_url=base_url,
            chat=chat,
            **options,
        )
    except (TaskConfigError, TaskRunError, RayBackendError, OSError) as exc:
        raise CliError(str(exc)) from exc
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        raise CliError(f"{type(exc).__name__}: {exc}") from exc
    if isinstance(outcome, TaskRun):
        _print_task(outcome.task.name, outcome, json_path, store)
    else:
        _print_group(outcome, json_path)


def _print_task(name: str, outcome: TaskRun, json_path: Path | None, store: bool) -> None:
    """One task's aggregates as a table (and as lm-eval's JSON with ``--json``), the stored
    run, and the docs that failed (exit 1: the aggregates leave them out)."""
    report = outcome.report
    table = Table(title=f"task {name} · {report['n_docs']} docs")
    for column in ("metric", "filter", "value", "stderr", "higher is better"):
        table.add_column(column)
    for metric, pipeline, value, stderr in _aggregate_rows(report["aggregate"]):
        better = "yes" if report["higher_is_better"].get(metric, True) else "no"
        table.add_row(metric, pipeline, value, stderr, better)
    console.print(table)
    _write_json(json_path, report)
    if store:
        run_id = outcome.run.id
        console.print(f"run {run_id} stored · `assay runs show {run_id[:8]}`", highlight=False)
    if outcome.errors:
        err_console.print(
            f"{len(outcome.errors)} doc(s) failed; the aggregates leave them out "
            f"(first: doc {outcome.errors[0]['doc']}: {outcome.errors[0]['error']})",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _aggregate_rows(aggregate: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """lm-eval's ``{"metric,filter": value, "metric_stderr,filter": stderr}`` as rows of
    (metric, filter, value, stderr), shown."""
    rows = []
    for key, value in aggregate.items():
        metric, _, pipeline = key.partition(",")
        if metric.endswith("_stderr"):
            continue
        stderr = aggregate.get(f"{metric}_stderr,{pipeline}")
        rows.append((metric, pipeline, _number(value), _number(stderr)))
    return rows


def _write_json(path: Path | None, report: Mapping[str, Any]) -> None:
    from assay.analysis.report_json import write_json_file

    if path is None:
        return
    try:
        write_json_file(path, report)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
    console.print(f"wrote {path}", highlight=False)


def _print_group(outcome: GroupRun, json_path: Path | None) -> None:
    """The group's aggregate and each task's, as one table (and JSON with ``--json``); the
    tasks with failed docs (exit 1)."""
    table = Table(title=f"group {outcome.group} · {len(outcome.tasks)} tasks")
    for column in ("task", "metric", "filter", "value", "stderr"):
        table.add_column(column)
    rows = [(outcome.group, outcome.aggregate)] + [
        (name, run.report["aggregate"]) for name, run in outcome.tasks.items()
    ]
    for name, aggregate in rows:
        for row in _aggregate_rows(aggregate):
            table.add_row(name, *row)
    console.print(table)
    _write_json(json_path, outcome.report)
    failed = {name: run.errors for name, run in outcome.tasks.items() if run.errors}
    if failed:
        err_console.print(
            f"docs failed in {', '.join(failed)}; the aggregates leave them out",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
