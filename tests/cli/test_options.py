"""Every CLI command function stays parse → call → print: at most 80 lines, counted with
``ast`` (``cli/options.py`` holds the option declarations, ``cli/option_parsing.py`` the
parsing), and the options shared through ``cli/options.py`` read the same on each command."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer.main

from assay.cli.app import app

LIMIT = 80


def function_lines(source: str, name: str) -> int:
    """Lines of the function ``name`` in ``source`` (``end_lineno - lineno + 1``: its
    ``def`` to its last line, decorators left out)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            assert node.end_lineno is not None
            return node.end_lineno - node.lineno + 1
    raise LookupError(name)


def command_functions() -> dict[str, Callable[..., Any]]:
    """Every command of the app (root commands loaded from ``COMMANDS``, subcommands),
    as the function its author wrote (Typer's wrapper unwrapped)."""
    found: dict[str, Callable[..., Any]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name in list(subs):
                walk(subs[name], (*path, name))
        elif command.callback is not None:
            found[" ".join(path)] = inspect.unwrap(command.callback)

    walk(typer.main.get_command(app), ())
    return found


def test_every_command_function_is_at_most_80_lines() -> None:
    functions = command_functions()
    assert {"run", "calibrate", "tasks run", "runs list", "datasets import"} <= set(functions)
    too_long = {}
    for path, function in functions.items():
        source = Path(inspect.getsourcefile(function) or "").read_text(encoding="utf-8")
        lines = function_lines(source, function.__name__)
        if lines > LIMIT:
            too_long[path] = lines
    assert too_long == {}


def test_the_count_is_the_functions_own_lines_and_a_long_one_is_caught() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    source = "@decorator\ndef short() -> None:\n    pass\n\n\ndef long() -> None:\n" + body + "\n"
    assert function_lines(source, "short") == 2
    assert function_lines(source, "long") == LIMIT + 1


def test_the_three_long_commands_are_now_within_60_lines() -> None:
    functions = command_functions()
    for path in ("run", "calibrate", "tasks run"):
        function = functions[path]
        source = Path(inspect.getsourcefile(function) or "").read_text(encoding="utf-8")
        assert function_lines(source, function.__name__) <= 60, path


def _option(path: str, flag: str) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path.split():
        command = command.commands[name]
    return next(p for p in command.params if flag in p.opts)


def test_a_shared_option_reads_the_same_on_each_command() -> None:
    for flag, paths in {
        "--name": ("run", "tasks run"),
        "--store": ("run", "tasks run"),
        "--progress": ("run", "runs resume"),
        "--ray-address": ("run", "calibrate", "tasks run", "runs resume"),
        "--workers": ("run", "calibrate", "tasks run"),
    }.items():
        helps = {path: _option(path, flag).help for path in paths}
        assert len(set(helps.values())) == 1, (flag, helps)
    assert _option("run", "--name").help == "A name for the run."
    assert _option("run", "--store").help == "Keep the run in the database."
    assert _option("run", "--store").default is None  # unset: the config's, else yes
    assert _option("tasks run", "--store").default is True
