"""What every CLI module shares: the consoles, the one-line error type, the store opener."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

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
