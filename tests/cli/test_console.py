"""Tables never cut a number or an id: blocks in pipes and narrow terminals."""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from assay.cli.common import CliConsole

LONG_ID = "8f10c9d60ffd4e2288e26aac8fa79ed7"


def _table() -> Table:
    table = Table(title="1 run(s)", caption="items 1 · duration 0.12 s")
    for column in ("id", "name", "mean", "95% CI"):
        table.add_column(column)
    table.add_row(LONG_ID, Text("a-run-with-a-rather-long-name"), "0.123456", "[0.100, 0.150]")
    return table


def _render(*, terminal: bool, width: int) -> str:
    out = io.StringIO()
    console = CliConsole(file=out, force_terminal=terminal, width=width, color_system=None)
    console.print(_table())
    return out.getvalue()


def test_without_a_terminal_each_row_is_a_block_with_full_values() -> None:
    text = _render(terminal=False, width=40)
    assert f"id: {LONG_ID}" in text
    assert "name: a-run-with-a-rather-long-name" in text
    assert "95% CI: [0.100, 0.150]" in text and "mean: 0.123456" in text
    assert "…" not in text and "items 1 · duration 0.12 s" in text


def test_a_narrow_terminal_gets_blocks_and_a_wide_one_a_table() -> None:
    assert f"id: {LONG_ID}" in _render(terminal=True, width=60)
    wide = _render(terminal=True, width=200)
    assert "┃" in wide or "│" in wide
    assert LONG_ID in wide and "…" not in wide


def test_nested_grids_are_unpacked() -> None:
    grid = Table.grid()
    grid.add_column()
    grid.add_row(_table())
    out = io.StringIO()
    CliConsole(file=out, force_terminal=False, width=40).print(grid)
    assert f"id: {LONG_ID}" in out.getvalue()
