"""What every CLI module shares: the consoles, the one-line error type, the store opener."""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.errors import MarkupError
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from assay.store import Store


class CliConsole(Console):
    """A console whose tables never cut a number or an id.

    On a terminal wide enough for a table's natural width, tables print as tables. In a
    pipe or a CI log (no terminal), or on a terminal too narrow, each table prints as one
    block per row (``column: value`` lines, nothing truncated), so full ids and numbers
    survive ``| grep`` and 80-column logs. Grids of tables are unpacked the same way.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:
        for obj in objects:
            table = _as_table(obj)
            if table is not None and not self._fits(table):
                self._print_blocks(table)
            else:
                super().print(obj, **kwargs)

    def _fits(self, table: Table) -> bool:
        if not self.is_terminal:
            return False
        unbounded = self.options.update_width(10_000)  # the table's natural width
        return Measurement.get(self, unbounded, table).maximum <= self.width

    def _print_blocks(self, table: Table) -> None:
        """One line per row (``column: value`` pairs; blank cells left out), so a run's
        summary in a CI log is one line per scorer, every value whole."""
        plain = self._plain
        if table.title:
            super().print(plain(table.title), markup=False, highlight=False, soft_wrap=True)
        headers = [plain(c.header) for c in table.columns]
        cells = [list(c.cells) for c in table.columns]
        grid = not table.show_header and all(not h for h in headers)
        for index in range(table.row_count):
            row = [column[index] if index < len(column) else "" for column in cells]
            if grid:
                for cell in row:
                    self.print(cell)
                continue
            pairs: list[str] = []
            for header, cell in zip(headers, row, strict=True):
                nested = _as_table(cell)
                if nested is not None:
                    self._print_blocks(nested)
                    continue
                value = plain(cell).strip()
                if value:
                    label = header.replace(chr(10), " ").strip() or "·"
                    pairs.append(f"{label}: {value}")
            if pairs:
                super().print(" · ".join(pairs), markup=False, highlight=False, soft_wrap=True)
        if table.caption:
            super().print(plain(table.caption), markup=False, highlight=False, soft_wrap=True)

    @staticmethod
    def _plain(value: Any) -> str:
        if isinstance(value, Text):
            return value.plain
        if isinstance(value, str):
            if "[" not in value:
                return value
            try:
                return Text.from_markup(value).plain
            except MarkupError:  # brackets that are data, not markup
                return value
        return str(value)


def _as_table(obj: Any) -> Table | None:
    """``obj`` as a table, following ``__rich__`` (e.g. a ``RunResult``)."""
    for _ in range(3):
        if isinstance(obj, Table):
            return obj
        rich = getattr(obj, "__rich__", None)
        if rich is None:
            return None
        obj = rich()
    return None


console = CliConsole()
err_console = Console(stderr=True)


class CliError(Exception):
    """An error to print as one line and exit with code 2."""


def open_cli_store() -> Store:
    """The store named by ``--db`` / ``$ASSAY_DATABASE_URL``, default ``.assay/assay.db``."""
    from assay.store import open_store

    return open_store(os.environ.get("ASSAY_DATABASE_URL") or None)


def when(ts: float | None) -> str:
    """A stored unix timestamp as local time, or a dash."""
    return "—" if ts is None else dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


_WORDS = {"int": "INTEGER", "float": "FLOAT", "str": "TEXT", "path": "PATH", "bool": ""}
_TYPE_LABEL = re.compile(r"<(?:list\[)?([A-Za-z_ ]+?)\]?>(\.\.\.)?")


def as_word(label: str | None) -> str | None:
    """``<int>`` → ``INTEGER``, ``<list[str]>`` → ``TEXT``, ``<bool>`` → nothing."""
    if label is None:
        return None
    match = _TYPE_LABEL.fullmatch(label)
    if match is None:
        return label
    inner = match.group(1)
    return _WORDS.get(inner.lower(), inner.upper().replace(" ", "_"))


def install_word_types() -> None:
    """Make ``--help`` show option types as words (``INTEGER``, ``FLOAT``, ``TEXT``) and
    nothing for on/off flags, instead of the installed Typer's ``<int>``/``<list[str]>``.

    Typer ≥ 0.2x renders types through ``display_type_rich``; it is wrapped once here (a
    presentation detail; an explicit ``metavar`` still wins). Older Typers lack the method
    and keep click's own words.
    """
    try:
        from typer import core
    except ImportError:  # pragma: no cover
        return
    for cls in (getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)):
        original = getattr(cls, "display_type_rich", None)
        if cls is None or original is None or getattr(original, "assay_words", False):
            continue

        def display_type_rich(self: Any, ctx: Any, _original: Any = original) -> str | None:
            return as_word(_original(self, ctx))

        display_type_rich.assay_words = True  # type: ignore[attr-defined]
        cls.display_type_rich = display_type_rich


def print_json(value: Any) -> None:
    """Machine-readable output on stdout (``--json``), never wrapped or styled."""
    import json

    print(json.dumps(value, indent=2, ensure_ascii=False))


def count(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``: a count with its noun in the right number (no "run(s)"). The
    same as ``analysis.formatting.count``, kept here so listing commands do not import the
    statistics."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def error_text(message: str | None, kind: str | None = None) -> str:
    """What an error line says: its message, else its kind (``TimeoutError``), never a
    bare ``error:`` (an exception raised without a message has an empty one)."""
    text = (message or "").strip()
    return text or (kind or "unknown error (no message)")
