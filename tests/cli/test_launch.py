"""The console script's fast root help: the same commands and texts as the app, no Typer."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import typer.main

from assay.cli import launch
from assay.cli.app import app

SRC = Path(__file__).parents[2] / "src"


def _first_paragraph(text: str | None) -> str:
    return " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())


def _app_table() -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    group = typer.main.get_command(app)
    ctx = group.make_context("assay", [], resilient_parsing=True)
    options = [record for p in group.get_params(ctx) if (record := p.get_help_record(ctx))]
    commands = [
        (name, _first_paragraph(command.help))
        for name, command in group.commands.items()  # type: ignore[attr-defined]
        if not command.hidden
    ]
    return _first_paragraph(group.help), options, commands


def test_the_table_says_what_the_app_says() -> None:
    summary, options, commands = _app_table()
    regenerate = "\n".join(f"    ({name!r}, {text!r})," for name, text in commands)
    assert list(launch.COMMANDS) == commands, (
        f"src/assay/cli/launch.py COMMANDS is stale; the app has:\n{regenerate}"
    )
    assert list(launch.OPTIONS) == options
    assert summary == launch.SUMMARY


def _run(*args: str, columns: int = 100, code: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": str(columns)}
    command = [sys.executable, "-m", "assay", *args] if not code else [sys.executable, "-c", code]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_root_help_lists_every_command_without_building_the_app() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['assay', '--help']\n"
        "from assay.cli.launch import main\n"
        "main()\n"
        "print('LOADED', sorted(m for m in ('typer', 'rich', 'assay.cli.app') "
        "if m in sys.modules), file=sys.stderr)"
    )
    result = _run(code=code)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "LOADED []"
    lines = result.stdout.splitlines()
    assert lines[0] == "Usage: assay [OPTIONS] COMMAND [ARGS]..."
    for name, _ in launch.COMMANDS:
        assert any(line.startswith(f"  {name} ") for line in lines), name


def test_python_dash_m_names_itself_and_wraps_at_the_terminal_width() -> None:
    result = _run("--help", columns=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: python -m assay [OPTIONS] COMMAND [ARGS]...")
    assert max(len(line) for line in result.stdout.splitlines()) <= 60
    words = " ".join(result.stdout.split())
    assert "so re-ingesting adds nothing." in words  # wrapped, never cut


def test_every_other_call_reaches_the_app() -> None:
    sub = _run("scorers", "--help")
    assert sub.returncode == 0 and "list" in sub.stdout, sub.stderr
    bad = _run("--help", "--bogus")
    assert bad.returncode == 2 and "--bogus" in bad.stderr
    assert bad.stdout == ""
