"""The ``assay`` console script: ``assay --help`` from a table, every other call to the app.

Building the Typer app imports every command module, builds every command's parameters and,
for its help, Rich's Markdown renderer: most of a second of CPU before a line of help.
The root help needs none of it, only the names and first paragraphs of the commands, so
they are listed here (as pip lists its commands in ``commands_dict``) and printed as plain
text. ``tests/cli/test_launch.py`` checks the table against the app, so a command added,
renamed or re-described there fails the test until the table says the same. Help of a
subcommand (``assay runs --help``) and every other call go to ``assay.cli.app``.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

SUMMARY = "Evaluate LLM applications: scorers, LLM judges, datasets and runs."
"""The root command's help (``typer.Typer(help=...)`` in ``assay.cli.app``)."""

OPTIONS: tuple[tuple[str, str], ...] = (
    ("--db TEXT", "Database URL (default $ASSAY_DATABASE_URL, else sqlite .assay/assay.db)."),
    ("--version", "Print assay's version and exit."),
    ("--help", "Show this message and exit."),
)
"""The root options: (usage, help), in the app's order."""

COMMANDS: tuple[tuple[str, str], ...] = (
    (
        "ingest",
        "Score recorded traffic with SCORERS and store it as a live run; items already stored "
        "(same trace and span ids) are skipped, so re-ingesting adds nothing.",
    ),
    ("run", "Run data through a target and scorers; print the summary; keep the run (default)."),
    (
        "optimize",
        "Optimize a prompt with GEPA, scored by assay scorers (budgeted, stored, resumable).",
    ),
    (
        "calibrate",
        "Calibrate a scorer against human labels: every statistic with a bootstrap 95% CI, "
        "stored as a run plus a certificate bound to the scorer's fingerprint.",
    ),
    (
        "optimize-judge",
        "Optimize a judge scorer's prompt (instructions and step templates) with GEPA against "
        "human labels; check the winner on held-out items; certify it when the gates pass.",
    ),
    (
        "serve",
        "Serve the JSON API and the web UI. A non-loopback --host needs a token (a strong "
        "one); requests must name the server by a loopback name, the --host address or a "
        "name of $ASSAY_SERVER_ALLOWED_HOSTS.",
    ),
    (
        "view",
        "Open an exported run (JSON) in the web UI from a temporary store; Ctrl-C stops it.",
    ),
    ("init", "Write a starter run config, dataset, application stub and pytest test."),
    ("score", "Score one output: a quick preview of a scorer."),
    (
        "demo",
        "Score the example dataset with the code scorers and a judge scorer, print a table.",
    ),
    ("scorers", "Browse the scorer registry."),
    ("runs", "Stored runs: list, show, export, delete, tag, compare, resume."),
    ("datasets", "Versioned datasets in the store."),
    ("tasks", "Benchmark tasks in lm-evaluation-harness YAML."),
    ("ci", "Continuous integration: summaries for pull requests."),
    ("live", "Live scoring: monitors of running applications."),
)
"""The root commands: (name, first paragraph of the help), in the app's order."""


def _rows(rows: tuple[tuple[str, str], ...], width: int) -> list[str]:
    """A two-column list: each term padded to the longest, its text wrapped beside it."""
    column = max(len(term) for term, _ in rows) + 4
    text_width = max(width - column, 20)
    lines: list[str] = []
    for term, text in rows:
        wrapped = textwrap.wrap(text, text_width) or [""]
        lines.append(f"  {term:<{column - 2}}{wrapped[0]}")
        lines.extend(" " * column + more for more in wrapped[1:])
    return lines


def root_help(prog: str, width: int) -> str:
    """The root command's help as plain text, wrapped at ``width`` columns."""
    width = max(width, 40)
    parts = [
        f"Usage: {prog} [OPTIONS] COMMAND [ARGS]...",
        "",
        *textwrap.wrap(SUMMARY, width, initial_indent="  ", subsequent_indent="  "),
        "",
        "Options:",
        *_rows(OPTIONS, width),
        "",
        "Commands:",
        *_rows(COMMANDS, width),
        "",
        *textwrap.wrap(f"Run '{prog} COMMAND --help' for a command's options.", width),
    ]
    return "\n".join(parts) + "\n"


def prog_name() -> str:
    """The name the user typed: ``assay``, or ``python -m assay`` (as click names it)."""
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "assay"
    return "python -m assay" if script in ("__main__.py", "-c", "-m") else script


def main() -> None:
    """Console-script entry point (``assay``)."""
    if sys.argv[1:] == ["--help"]:
        sys.stdout.write(root_help(prog_name(), shutil.get_terminal_size().columns))
        return
    from assay.cli.app import main as run_app

    run_app()


if __name__ == "__main__":
    main()
