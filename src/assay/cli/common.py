"""What every CLI module shares: the consoles, the one-line error type, the store opener."""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from assay.store import Store

console = Console()
err_console = Console(stderr=True)


class CliError(Exception):
    """An error to print as one line and exit with code 2."""


def open_cli_store() -> Store:
    """The store named by ``--db`` / ``$ASSAY_DATABASE_URL``, default ``.assay/assay.db``."""
    from assay.store import open_store

    return open_store(os.environ.get("ASSAY_DATABASE_URL") or None)


def parse_pairs(pairs: list[str], option: str) -> list[str]:
    """Check ``key=value`` pairs (for ``--map``) and return them unchanged."""
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise CliError(f"{option} {pair!r}: expected key=value")
    return pairs


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
