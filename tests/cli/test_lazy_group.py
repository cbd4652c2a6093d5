"""Root commands load on first use: a subcommand's ``--help`` imports its own module and
no other command's, the table names every command the app has, in help order, and help
text is printed as written (no Rich markup eating ``[ray]``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from assay.cli import launch
from assay.cli.app import COMMANDS, app
from assay.cli.lazy_group import LazyCommands, load_command

SRC = Path(__file__).parents[2] / "src"
COMMAND_MODULES = sorted({spec.partition(":")[0] for spec in COMMANDS.values() if spec})


def _loaded_after(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    code = (
        "import sys\n"
        f"sys.argv = ['assay', *{list(args)!r}]\n"
        "from assay.cli.launch import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', ' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    line = next(x for x in result.stderr.splitlines() if x.startswith("LOADED "))
    return result, set(line.split()[1:])


def test_a_subcommands_help_loads_its_module_alone() -> None:
    result, loaded = _loaded_after("runs", "--help")
    assert "Stored runs: list, show, export" in result.stdout
    assert [m for m in COMMAND_MODULES if m in loaded] == ["assay.cli.runs"]
    assert "typer.rich_utils" not in loaded  # plain click help


def test_a_top_level_command_loads_its_module_alone() -> None:
    result, loaded = _loaded_after("calibrate", "--help")
    assert "Calibrate a scorer against human labels" in result.stdout
    assert [m for m in COMMAND_MODULES if m in loaded] == ["assay.cli.calibrate"]


def test_the_table_lists_every_command_in_help_order() -> None:
    group = typer.main.get_command(app)
    names = list(group.commands)  # type: ignore[attr-defined]
    assert names == list(COMMANDS) == [name for name, _ in launch.COMMANDS]
    for name in names:  # every entry loads, under its own name
        assert group.commands[name].name == name  # type: ignore[attr-defined]


def test_help_text_is_printed_as_written() -> None:
    result, _ = _loaded_after("run", "--help")
    assert "pip install 'assay[ray]'" in " ".join(result.stdout.split())


def test_lazy_commands_build_only_what_is_looked_up() -> None:
    commands = LazyCommands(
        {"own": "built"},
        {"tasks": "assay.cli.tasks:tasks_app", "own": None, "ci": "assay.cli.ci:ci_app"},
    )
    assert list(commands) == ["tasks", "own", "ci"] and len(commands) == 3
    assert commands.loaded() == ["own"]
    assert commands["ci"].name == "ci"
    assert commands.loaded() == ["own", "ci"]
    assert commands.get("nosuch") is None and "nosuch" not in commands
    with pytest.raises(KeyError):
        commands["nosuch"]
    del commands["tasks"]
    assert list(commands) == ["own", "ci"]


def test_a_command_function_becomes_one_command() -> None:
    command = load_command("init", "assay.cli.init_cmd:init")
    assert command.name == "init"
    assert any("--force" in p.opts for p in command.params)
