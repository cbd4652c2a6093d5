"""Subcommands loaded on first use: the root group names each command's module
(``"assay.cli.runs:runs_app"``) and imports it only when that command runs or is listed.

Why: building the whole Typer app imports every command module and builds every command's
parameters, so ``assay runs --help`` paid for ``optimize``, ``tasks`` and ``serve`` too.
This is click's documented ``LazyGroup`` pattern (click docs, "Lazily Loading
Subcommands"), as pip and Flask do it, applied to a Typer group: ``resolve_command`` asks
``get_command`` for one name, which loads one module. Listing the commands (the root help,
shell completion) loads them all, which is why the console script prints the root help
from its own table (``cli/launch.py``) instead.

A lazy entry is a Typer app (a command group, e.g. ``runs_app``) or a command function
(``run``); it is turned into a click command through a throwaway Typer with Typer's public
API, exactly as ``app.add_typer``/``app.command`` would have turned it, so its options,
help and exit behaviour do not change.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperGroup

Command = Any
"""A click command of Typer's vendored click (``typer._click``; not typed for mypy here)."""


def load_command(name: str, spec: str, markup_mode: Any = None) -> Command:
    """The click command ``spec`` (``"module:attr"``) names, called ``name``, with the
    parent group's ``rich_markup_mode`` (Typer passes it down to eagerly added commands)."""
    module_name, _, attr = spec.partition(":")
    target = getattr(importlib.import_module(module_name), attr)
    shell = typer.Typer(add_completion=False, rich_markup_mode=markup_mode)
    if isinstance(target, typer.Typer):
        shell.add_typer(target, name=name)
        group = typer.main.get_command(shell)
        return group.commands[name]  # type: ignore[attr-defined]
    shell.command(name)(target)
    return typer.main.get_command(shell)


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands: those built with the group, plus ``lazy`` ones (name ->
    ``"module:attr"``) built when first looked up. Names iterate in ``order`` (the table's
    order, the group's own commands where the table names them ``None``), so the help
    lists commands as they were declared."""

    def __init__(
        self,
        built: Mapping[str, Command],
        table: Mapping[str, str | None],
        markup_mode: Any = None,
    ) -> None:
        self._built: dict[str, Command] = dict(built)
        self._markup_mode = markup_mode
        self._lazy = {name: spec for name, spec in table.items() if spec is not None}
        self._order = [*table, *(name for name in built if name not in table)]

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            spec = self._lazy.get(name)
            if spec is None:
                raise KeyError(name)
            self._built[name] = load_command(name, spec, self._markup_mode)
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        if name not in self._order:
            self._order.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._built and name not in self._lazy:
            raise KeyError(name)
        self._built.pop(name, None)
        self._lazy.pop(name, None)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter([n for n in self._order if n in self._built or n in self._lazy])

    def __len__(self) -> int:
        return len(set(self._built) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._lazy

    def loaded(self) -> list[str]:
        """The names built so far (for tests: what a call actually imported)."""
        return [n for n in self if n in self._built]


class LazyTyperGroup(TyperGroup):
    """A ``TyperGroup`` whose ``commands`` are a ``LazyCommands`` over ``LAZY``; subclass it
    with the table and pass the subclass as ``typer.Typer(cls=...)``."""

    LAZY: ClassVar[Mapping[str, str | None]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.commands, self.LAZY, self.rich_markup_mode)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names only; nothing is imported
