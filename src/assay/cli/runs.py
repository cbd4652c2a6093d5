"""``assay runs list|show|export|delete|tag|compare|resume``: look at stored runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from assay.cli.backend_flags import RayAddressFlag
from assay.cli.common import (
    CliError,
    console,
    count,
    err_console,
    error_text,
    open_cli_store,
    when,
)
from assay.cli.options import ProgressOpt

if TYPE_CHECKING:
    from assay.runner.options import Backend
    from assay.store import Store
    from assay.types import RunRecord

runs_app = typer.Typer(
    help="Stored runs: list, show, export, delete, tag, compare, resume.", no_args_is_help=False
)


def _get(store: Store, run_id: str) -> RunRecord:
    try:
        return store.runs.get(run_id)
    except LookupError as exc:
        raise CliError(str(exc).strip("'\"")) from exc


@runs_app.command("list")
def runs_list(
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many runs to list.")] = 20,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="Only runs of this stored dataset.")
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option("--tag", help="Only runs with this tag (git.branch=main, baseline=NAME)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the runs as JSON (full records).")
    ] = False,
) -> None:
    """The most recent runs, newest first."""
    from assay.summary.progress import run_progress

    with open_cli_store() as store:
        records = store.runs.list(limit=limit, dataset=dataset, tag=tag)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
        return
    table = Table(title=count(len(records), "run"), title_justify="left")
    for column in ("id", "name", "data", "target", "status", "results", "errors", "created"):
        table.add_column(column)
    for r in records:
        info = r.info
        data = (
            f"{info.dataset_name} v{info.dataset_version}"
            if info.dataset_name
            else (Path(info.data_source).name if info.data_source else "inline")
        )
        table.add_row(
            info.id,
            Text(info.name or ""),
            Text(data),
            Text(info.target.label),
            r.status,
            run_progress(r).text,
            f"{r.failed_results:,}",
            when(info.created_at),
        )
    console.print(table)


@runs_app.command("show")
def runs_show(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    items: Annotated[int, typer.Option("--items", help="Show the first N item results.")] = 10,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the run record and its first N results as JSON."),
    ] = False,
) -> None:
    """A run's summary and its first item results."""
    from assay.analysis.report_terminal import summary_table
    from assay.summary.progress import run_progress

    with open_cli_store() as store:
        record = _get(store, run_id)
        if as_json:
            results = list(store.runs.results(record.id, limit=max(items, 0)))
            payload = {
                "run": record.model_dump(mode="json"),
                "results": [r.model_dump(mode="json") for r in results],
            }
            print(json.dumps(payload, indent=2))
            return
        console.print(summary_table(record))
        progress = run_progress(record)
        if progress.partial:
            console.print(
                Text(
                    f"partial: {progress.text} results ({record.status}); "
                    f"finish it with `assay runs resume {record.id}`",
                    style="yellow",
                )
            )
        if record.info.tags:
            console.print(Text("tags: " + ", ".join(record.info.tags)))
        if record.info.backend != "local":
            console.print(Text(f"backend: {record.info.backend}, {record.info.workers} workers"))
        if items > 0:
            table = Table(title=f"first {items} results", title_justify="left")
            for column in ("item", "rep", "output", "latency", "scores"):
                table.add_column(column, overflow="fold")
            for result in store.runs.results(record.id, limit=items):
                output = (
                    Text(
                        f"error: {error_text(result.error.message, result.error.kind)}", style="red"
                    )
                    if result.error
                    else Text(f"warning: {'; '.join(result.warnings)}", style="yellow")
                    if result.warnings and result.output is None
                    else Text(str(result.output)[:120])
                )
                scores = ", ".join(
                    f"{key}={'—' if s.score is None else f'{s.score:.3g}'}"
                    + ("" if s.status == "ready" else f" ({s.status})")
                    for key, s in result.scores.items()
                )
                latency = "—" if result.latency_ms is None else f"{result.latency_ms:.0f} ms"
                table.add_row(
                    Text(result.item_id), str(result.repeat), output, latency, Text(scores)
                )
            console.print(table)


EXPORT_FORMATS = ("csv", "jsonl", "json", "html")
# the report suffixes of operations.reports.REPORT_FORMATS, spelled here so `--help` does not
# import the store (tests/cli/test_runs_suffixes.py checks the two agree)
_SUFFIX_FORMATS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
}


@runs_app.command("export")
def runs_export(
    run_id: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output file (default: standard output)."),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="csv | jsonl (one result a line) | json (summary + results) | html "
            "(default: from --out's suffix).",
        ),
    ] = None,
) -> None:
    """Write a run's results as CSV or JSONL (streamed), JSON or a self-contained HTML
    report. A file is written under a temporary name and renamed when complete."""
    from assay.operations.reports import ReportError, export_run
    from assay.operations.run_items import export_lines

    kind = _export_format(fmt, out)
    with open_cli_store() as store:
        record = _get(store, run_id)
        if kind in ("json", "html"):
            if out is None:
                raise CliError(f"--format {kind}: give --out FILE")
            try:
                export_run(
                    record.id, out.with_suffix(f".{kind}") if not out.suffix else out, store=store
                )
            except ReportError as exc:
                raise CliError(f"--out {exc}") from exc
        else:
            _, lines = export_lines(record.id, "csv" if kind == "csv" else "jsonl", store=store)
            if out is None:
                for line in lines:
                    sys.stdout.write(line)
                sys.stdout.flush()
                return
            _write_atomically(out, lines)
    err_console.print(f"wrote {out}", highlight=False)


def _export_format(fmt: str | None, out: Path | None) -> str:
    if fmt is not None:
        if fmt.lower() not in EXPORT_FORMATS:
            raise CliError(f"--format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
        return fmt.lower()
    if out is None:
        return "jsonl"
    kind = _SUFFIX_FORMATS.get(out.suffix.lower())
    if kind is None:
        raise CliError(
            f"--out {out}: use a .csv, .jsonl, .json or .html file name, or give --format"
        )
    return kind


def _write_atomically(path: Path, lines: Iterable[str]) -> None:
    """Stream ``lines`` to a sibling temporary file and rename it: an interrupted export
    never leaves a truncated file under the final name."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as handle:
            for line in lines:
                handle.write(line)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CliError(f"--out {path}: {exc.strerror or exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@runs_app.command("delete")
def runs_delete(
    run_ids: Annotated[list[str], typer.Argument(help="Run ids or unique prefixes.")],
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Delete without asking for confirmation.")
    ] = False,
) -> None:
    """Delete runs with their results, scores and annotations (asks first unless --yes)."""
    with open_cli_store() as store:
        records = [_get(store, run_id) for run_id in run_ids]
        names = ", ".join(
            f"{r.id[:8]}{f' ({r.info.name})' if r.info.name else ''} "
            f"[{r.completed_results:,} results]"
            for r in records
        )
        if not yes:
            if not sys.stdin.isatty():
                raise CliError(f"deleting {names} needs confirmation: pass --yes")
            if not typer.confirm(f"delete run {names}?", default=False):
                err_console.print("nothing deleted", highlight=False)
                raise typer.Exit(1)
        for record in records:
            store.runs.delete(record.id)
    console.print(Text(f"deleted {names}"))


@runs_app.command("tag")
def runs_tag(
    run_id: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    tags: Annotated[list[str], typer.Argument(help="Tags to add (e.g. baseline, git.branch=x).")],
    remove: Annotated[
        bool, typer.Option("--remove", help="Remove these tags instead of adding them.")
    ] = False,
) -> None:
    """Add tags to a run (or remove them with --remove); prints the run's tags."""
    from assay.types import check_tags

    try:
        checked = check_tags(tags)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    with open_cli_store() as store:
        record = _get(store, run_id)
        if remove:
            store.runs.remove_tags(record.id, checked)
        else:
            store.runs.add_tags(record.id, checked)
        now_tags = store.runs.get(record.id).info.tags
    console.print(Text(f"{record.id[:8]} tags: {', '.join(now_tags) or '(none)'}"))


@runs_app.command("compare")
def runs_compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run.")],
    run_b: Annotated[str, typer.Argument(help="Candidate run.")],
    threshold: Annotated[
        float, typer.Option("--threshold", help="Per-item change that counts as a regression.")
    ] = 0.0,
    top: Annotated[int, typer.Option("--top", help="Items to list per direction.")] = 10,
    report: Annotated[Path | None, typer.Option("--report", help="Write an HTML report.")] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a scorer's paired difference is a significant regression, or "
            "when either run is interrupted, failed or partial.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the comparison as JSON instead of tables.")
    ] = False,
) -> None:
    """Difference of means per scorer with a paired bootstrap CI; regressed/improved items."""
    from assay.analysis.report_terminal import comparison_table
    from assay.operations.reports import write_comparison_report
    from assay.operations.stored_runs import compare_stored

    with open_cli_store() as store:
        a = _get(store, run_a)
        b = _get(store, run_b)
        comparison = compare_stored(a.id, b.id, store=store, threshold=threshold)
        if as_json:
            print(json.dumps(comparison.model_dump(mode="json"), indent=2))
        else:
            console.print(comparison_table(comparison, top=top))
        if report is not None:
            write_comparison_report(comparison, report, store=store)
            console.print(f"wrote {report}", highlight=False)
    for warning in comparison.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False)
    if fail_on_regression:
        from assay.analysis.gates import check_complete, check_regressions

        failures = [*check_complete(a, "A"), *check_complete(b, "B")]
        failures += check_regressions(comparison)
        for failure in failures:
            err_console.print(f"gate failed: {failure.reason}", markup=False, soft_wrap=True)
        if failures:
            raise typer.Exit(1)


def _backend(value: str | None) -> Backend | None:
    if value is None:
        return None
    if value == "local":
        return "local"
    if value == "ray":
        return "ray"
    raise CliError(f"--backend {value!r}: expected 'local' or 'ray'")


@runs_app.command("resume")
def runs_resume(
    run_id: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-c", help="Items in flight at once (default: the run's)."),
    ] = None,
    progress: ProgressOpt = None,
    allow_changed: Annotated[
        bool,
        typer.Option(
            "--allow-changed",
            help="Resume even if a scorer's or the target's fingerprint changed since the "
            "run started (its results then mix two versions).",
        ),
    ] = False,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="'local' or 'ray' (default: the run's own backend)."),
    ] = None,
    ray_address: RayAddressFlag = None,
) -> None:
    """Finish an interrupted or killed run: only the missing results run."""
    from assay.analysis.report_terminal import summary_table
    from assay.operations.stored_runs import resume_run

    with open_cli_store() as store:
        record = _get(store, run_id)
        try:
            result = resume_run(
                record.id,
                store=store,
                concurrency=concurrency,
                progress=progress,
                allow_changed=allow_changed,
                backend=_backend(backend),
                ray_address=ray_address,
            )
        except KeyboardInterrupt:
            err_console.print(f"interrupted again: `assay runs resume {run_id}` continues it")
            raise typer.Exit(130) from None
        except (ValueError, LookupError) as exc:
            raise CliError(str(exc)) from exc
    console.print(summary_table(result.record))
