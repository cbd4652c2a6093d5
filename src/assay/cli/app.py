"""The ``assay`` command line: a thin shell over the Python API.

Every command maps bad input (unknown scorer, bad param, unreadable file) to one clear line
on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay.cli.common import CliError, console, err_console, error_text, install_word_types
from assay.cli.lazy_group import LazyTyperGroup
from assay.extras import MissingExtraError
from assay.registry import RegistryError

install_word_types()

COMMANDS: dict[str, str | None] = {
    "ingest": "assay.cli.live:ingest_command",
    "run": "assay.cli.run_cmd:run",
    "optimize": "assay.cli.optimize:optimize_command",
    "calibrate": "assay.cli.calibrate:calibrate",
    "optimize-judge": "assay.cli.optimize_judge:optimize_judge_command",
    "serve": "assay.cli.serve:serve",
    "view": "assay.cli.view_cmd:view",
    "init": "assay.cli.init_cmd:init",
    "score": None,
    "demo": None,
    "scorers": None,
    "runs": "assay.cli.runs:runs_app",
    "datasets": "assay.cli.datasets:datasets_app",
    "tasks": "assay.cli.tasks:tasks_app",
    "ci": "assay.cli.ci:ci_app",
    "live": "assay.cli.live:live_app",
}
"""The root commands in help order: ``"module:attr"`` (a command function or a Typer app of
subcommands), imported when the command is first used (``cli/lazy_group.py``), or ``None``
for the commands defined in this module."""


class _AssayGroup(LazyTyperGroup):
    LAZY = COMMANDS


app = typer.Typer(
    name="assay",
    help="Evaluate LLM applications: scorers, LLM judges, datasets and runs.",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=_AssayGroup,
    # Plain click help, as the root help of cli/launch.py: Rich's help renderer costs
    # 0.1-0.2 s of imports per --help, and its markup ate "[ray]" in "pip install
    # 'assay[ray]'" (help texts are plain text, never markup).
    rich_markup_mode=None,
)
scorers_app = typer.Typer(help="Browse the scorer registry.", no_args_is_help=False)
app.add_typer(scorers_app, name="scorers")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"assay {version('assay')}")
        raise typer.Exit(0)


@app.callback()
def _options(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL (default $ASSAY_DATABASE_URL, else sqlite .assay/assay.db).",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print assay's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Evaluate LLM applications: scorers, LLM judges, datasets and runs."""
    if db:
        os.environ["ASSAY_DATABASE_URL"] = db


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.4f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------------- scorers
@scorers_app.command("list")
def scorers_list(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (with params schemas).")
    ] = False,
) -> None:
    """List every registered scorer type."""
    from rich.table import Table

    from assay.scoring.registry import list_scorers

    infos = list_scorers()
    if as_json:
        print(json.dumps([info.model_dump(mode="json") for info in infos], indent=2))
        return
    table = Table(title=f"{len(infos)} scorer types", title_justify="left")
    for column in ("type", "label", "kind", "direction", "range", "params", "extra"):
        table.add_column(column)
    for info in infos:
        props = info.params_schema.get("properties", {})
        table.add_row(
            info.type,
            info.label,
            info.kind,
            "higher is better" if info.higher_is_better else "lower is better",
            f"{info.score_range[0]:g}–{info.score_range[1]:g}",
            ", ".join(props) or "—",
            _extra_cell(info.extra),
        )
    console.print(table)
    if any(info.extra is not None for info in infos):
        console.print(
            "extra: the install extra a type needs, e.g. pip install 'assay[nlp]'",
            markup=False,
            highlight=False,
        )


def _extra_cell(extra: str | None) -> str:
    """``—`` (core install), ``nlp``, or ``nlp (not installed)``."""
    from assay.extras import missing_modules

    if extra is None:
        return "—"
    return f"{extra} (not installed)" if missing_modules(extra) else extra


@scorers_app.command("show")
def scorers_show(
    type_id: Annotated[str, typer.Argument(help="Scorer type id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the type as JSON (with its params schema).")
    ] = False,
) -> None:
    """Describe one scorer type: description, params with defaults and types, direction."""
    from rich.table import Table

    from assay.scoring.registry import get_scorer_type

    scorer_type = get_scorer_type(type_id)
    info = scorer_type.info()
    if as_json:
        print(json.dumps(info.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]{info.type}[/bold] — {info.label}")
    console.print(info.description)
    console.print(
        f"kind: {info.kind} ({info.mode}); "
        f"{'higher' if info.higher_is_better else 'lower'} is better; "
        f"range {info.score_range[0]:g}–{info.score_range[1]:g}"
    )
    if info.aliases:
        console.print(f"aliases: {', '.join(info.aliases)}")
    if info.reference:
        console.print(f"reference: {info.reference}")
    if info.extra is not None:
        console.print(
            f"needs: pip install 'assay[{info.extra}]' ({_extra_cell(info.extra)})",
            markup=False,
            highlight=False,
        )
    props: dict[str, Any] = info.params_schema.get("properties", {})
    required = set(info.params_schema.get("required", []))
    if not props:
        console.print("params: none")
    else:
        table = Table(title="params", title_justify="left")
        for column in ("name", "type", "default", "description"):
            table.add_column(column)
        for name, prop in props.items():
            default = "(required)" if name in required else json.dumps(prop.get("default"))
            table.add_row(name, _schema_type(prop), default, prop.get("description", ""))
        console.print(table)
    if info.preview_notes:
        console.print(f"notes: {info.preview_notes}")
    for name, text in info.prompts.items():
        param = "instructions" if name == "instructions" else f"templates.{name}"
        console.print(f"\n[bold]{name}[/bold] (override with param {param!r}):", highlight=False)
        console.print(text, markup=False, highlight=False)


def _schema_type(prop: dict[str, Any]) -> str:
    if "type" in prop:
        kind = prop["type"]
        if kind == "array" and isinstance(prop.get("items"), dict):
            return f"array[{_schema_type(prop['items'])}]"
        return str(kind)
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "anyOf" in prop:
        return " | ".join(_schema_type(p) for p in prop["anyOf"])
    if "const" in prop:
        return json.dumps(prop["const"])
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    return "any"


# --------------------------------------------------------------------------- score
@app.command("score")
def score(
    type_id: Annotated[str, typer.Argument(help="Scorer type id (see `assay scorers list`).")],
    input: Annotated[
        str | None, typer.Option("--input", help="Input text, JSON, or @file.")
    ] = None,
    output: Annotated[str, typer.Option("--output", help="Output text, JSON, or @file.")] = "",
    ground_truth: Annotated[
        str | None, typer.Option("--ground-truth", help="Expected output, JSON, or @file.")
    ] = None,
    context: Annotated[
        list[str] | None, typer.Option("--context", help="A context passage (repeatable).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Scorer param key=value (repeatable).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full ScoreResult as JSON.")
    ] = False,
) -> None:
    """Score one output: a quick preview of a scorer."""
    from assay.operations.inputs import InputError, parse_params, read_value
    from assay.scoring.registry import create_scorer

    try:
        scorer = create_scorer(type_id, **parse_params(param or []))
        values = {
            "input": read_value(input, "--input"),
            "output": read_value(output, "--output"),
            "ground_truth": read_value(ground_truth, "--ground-truth"),
        }
    except InputError as exc:
        raise CliError(str(exc)) from exc
    result = scorer.run_sync(**values, context=list(context) if context else None)
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        console.print(f"[bold]{scorer.label}[/bold] ({scorer.type_id})")
        console.print(f"status: {result.status}")
        console.print(f"score: {_fmt(result.score)}")
        if result.reason:
            console.print(f"reason: {result.reason}")
        if result.error:
            step = f" (step {result.error.failed_step})" if result.error.failed_step else ""
            message = error_text(result.error.message, result.error.kind)
            console.print(f"error: {message}{step}", markup=False, highlight=False)
    if result.status == "error":
        raise typer.Exit(1)


# --------------------------------------------------------------------------- demo
@app.command("demo")
def demo(
    data: Annotated[
        Path | None, typer.Option("--data", help="A JSONL dataset (default: the bundled one).")
    ] = None,
    judge: Annotated[
        bool, typer.Option("--judge/--no-judge", help="Add a judge scorer (toxicity).")
    ] = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the scores as JSON instead of a table.")
    ] = False,
) -> None:
    """Score the example dataset with the code scorers and a judge scorer, print a table.

    Offline by default: the judge is the embedded SmolLM2-135M smoke-test model unless
    ASSAY_JUDGE_MODEL names another."""
    from assay.operations.demo import SHORT_LABELS, default_demo_path, run_demo

    path = data or default_demo_path()
    try:
        with console.status("scoring the demo dataset ..."):
            import asyncio

            report = asyncio.run(run_demo(path, judge=judge))
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    keys = list(report.scorer_labels)
    if as_json:
        payload = {
            "run_id": report.run_id,
            "report": str(report.report_path) if report.report_path else None,
            "means": {key: report.mean(key) for key in keys},
            "items": [
                {
                    "id": row.id,
                    "scores": {
                        key: {"status": r.status, "score": r.score} for key, r in row.scores.items()
                    },
                }
                for row in report.rows
            ],
            "notes": list(report.notes),
        }
        print(json.dumps(payload, indent=2))
        return
    from rich.table import Table

    table = Table(
        title=f"assay demo — {len(report.rows)} items from {path.name}", title_justify="left"
    )
    table.add_column("item", no_wrap=True)
    for key in keys:
        table.add_column(SHORT_LABELS.get(key, key), justify="right")
    for row in report.rows:
        cells = []
        for key in keys:
            result = row.scores.get(key)
            if result is None:
                cells.append("")
            elif result.status == "error":
                cells.append("[red]error[/red]")
            else:
                cells.append(_fmt(result.score))
        table.add_row(row.id, *cells)
    table.add_section()
    table.add_row("[bold]mean[/bold]", *(f"[bold]{_fmt(report.mean(k))}[/bold]" for k in keys))
    console.print(table)
    console.print(
        "Text scorers compare each answer with its expected answer; tone reads the answer "
        "alone; tool-call accuracy checks the tool row. Try `assay scorers list`."
    )
    for note in report.notes:
        console.print(note, markup=False, highlight=False)
    if report.run_id:
        console.print(
            f"Stored as run {report.run_id[:8]} (`assay runs show {report.run_id[:8]}`); "
            f"HTML report: {report.report_path}",
            markup=False,
            highlight=False,
        )


def main() -> None:
    """Console-script entry point: one clear line and exit code 2 on bad input."""
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # typer.Exit(n) inside a command, unraised
            sys.exit(code)
    except (RegistryError, CliError, MissingExtraError) as exc:  # unknown names, bad params
        line = error_text(str(exc), type(exc).__name__)
        err_console.print(f"error: {line}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted", highlight=False)
        sys.exit(130)
    except Exception as exc:  # usage errors of (Typer's vendored) click, database failures
        database_problem = _database_problem(exc)
        if database_problem is not None:
            err_console.print(f"error: {database_problem}", markup=False, soft_wrap=True)
            sys.exit(2)
        if not _is_click_exception(exc):
            raise
        _usage_error(exc)


def _database_problem(exc: BaseException) -> str | None:
    """One line for a database that cannot be used (also when it fails mid-command)."""
    from assay.store.errors import StoreUnavailableError, describe_database_error

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreUnavailableError):
            return str(current)
        if type(current).__module__.startswith(("sqlalchemy", "sqlite3", "psycopg")):
            url = os.environ.get("ASSAY_DATABASE_URL") or "sqlite:///.assay/assay.db"
            return describe_database_error(current, url)
        current = current.__cause__ or current.__context__
    return None


def _is_click_exception(exc: Exception) -> bool:
    """Typer ≥ 0.16 vendors click as ``typer._click``; older ones raise click's own."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "ClickException" in names and hasattr(exc, "format_message")


def _usage_error(exc: Any) -> None:
    """One line (plus the command's short usage for usage errors), exit code 2."""
    ctx = getattr(exc, "ctx", None)
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = "missing command" if "NoArgsIsHelpError" in names else exc.format_message()
    message = message.rstrip(".")
    if "UsageError" in names and ctx is not None:
        err_console.print(ctx.get_usage(), markup=False, highlight=False)
        hint = f"Try '{ctx.command_path} --help' for help."
        err_console.print(
            f"error: {message}. {hint}", markup=False, highlight=False, soft_wrap=True
        )
        sys.exit(2)
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    code = getattr(exc, "exit_code", 2)
    sys.exit(code if isinstance(code, int) and code else 2)


if __name__ == "__main__":
    main()
