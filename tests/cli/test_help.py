"""``--help`` of every command: types as words, and a description for every option."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from assay.cli.app import app


def _commands() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            found.append(path)

    walk(typer.main.get_command(app), ())
    return found


@pytest.mark.parametrize("path", _commands(), ids=" ".join)
def test_help_shows_types_as_words(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert not re.search(r"<(int|float|str|bool|path|list\[[a-z]+\])>", result.output), (
        result.output
    )


def test_every_option_has_a_description() -> None:
    missing: list[str] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        for param in getattr(command, "params", ()):
            if param.param_type_name == "option" and not getattr(param, "help", None):
                missing.append(f"{' '.join(path) or 'assay'} {param.opts[0]}")
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    assert missing == []
