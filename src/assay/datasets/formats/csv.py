"""CSV: a header row naming the columns, then one item per record.

CSV cells are only strings, so reading applies these conventions (and writing produces them):

- an empty cell is ``None``; the cell ``""`` (two double quotes: the JSON text of an empty
  string) is the empty string, so ``output: ""`` and a missing output stay apart;
- in the fields that usually hold structured data (``input``, ``output``,
  ``expected_output``, ``context``, ``metadata``) a cell that looks like a JSON array or
  object is parsed as JSON;
- formula neutralisation (OWASP "CSV injection"): a spreadsheet runs a cell that starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula, so such a text
  is written with a leading apostrophe (``'=1+1``), which spreadsheets show as text. To keep
  this reversible, a text that is apostrophes followed by such a character (or by ``""``)
  gets one more apostrophe, and reading removes one apostrophe from exactly those cells.

Everything else stays a string, so a CSV round trip is exact for strings (empty ones and
formula-like ones included), lists, dicts and ``None``; numbers and booleans come back as
strings, and a string that itself looks like a JSON array/object comes back parsed. Use
JSONL or Parquet when that matters.

Line numbers count physical lines with the header as line 1, so the first record is line 2;
a record with a multi-line quoted cell is reported at the line it starts on.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.datasets.errors import DatasetError, DatasetImportError
from assay.datasets.formats._common import RowSource, atomic_output, open_text_write, text_lines
from assay.types import ITEM_FIELDS, Item

JSON_FIELDS = frozenset({"input", "output", "expected_output", "context", "metadata"})
"""Item fields whose cells are parsed as JSON when they look like an array or object."""

EMPTY_STRING_CELL = '""'
"""How an empty string is written (an empty cell is ``None``)."""
_NEUTRALISED = re.compile(r"^'*(?:[=+\-@\t\r]|\"\"$)")
"""Texts written with one more leading apostrophe (see the module docstring)."""


_NEUTRALISED_FIRST = frozenset("'=+-@\t\r\"")
"""The first characters ``_NEUTRALISED`` can match at all: most texts are let through
without running the pattern (an export writes a few per row, 100,000 rows)."""


def text_cell(text: str) -> str:
    """The cell of a text: ``""`` for the empty string, a leading apostrophe for a text a
    spreadsheet would run as a formula (reversible: :func:`cell_text`)."""
    if text == "":
        return EMPTY_STRING_CELL
    if text[0] in _NEUTRALISED_FIRST and _NEUTRALISED.match(text):
        return "'" + text
    return text


def cell_text(cell: str) -> str | None:
    """The text of a cell as :func:`text_cell` wrote it; an empty cell is ``None``."""
    if cell == "":
        return None
    if cell == EMPTY_STRING_CELL:
        return ""
    if cell.startswith("'") and _NEUTRALISED.match(cell[1:]):
        return cell[1:]
    return cell


# Cells holding whole documents exceed the stdlib's 128 KiB default; the limit is
# process-global, so it is only ever raised.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))


def open_rows(path: Path, *, source: str, encoding: str | None = None) -> RowSource:
    """Rows of a CSV file, located by the 1-based line their record starts on."""
    return RowSource(unit="line", rows=_rows(path, source, encoding), decode=decode_cell)


def _rows(path: Path, source: str, encoding: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(text_lines(path, source=source, encoding=encoding))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetImportError(str(exc), source=source, unit="line", number=1) from None
    if header is None:
        raise DatasetImportError(
            "the file is empty: expected a header row naming the columns", source=source
        )
    names = [h.strip() for h in header]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise DatasetImportError(
            f"duplicate column names: {', '.join(dupes)}", source=source, unit="line", number=1
        )
    width = len(names)
    rows = 0
    previous_end = reader.line_num
    while True:
        start = previous_end + 1
        try:
            record = next(reader)
        except StopIteration:
            if not rows:
                raise DatasetImportError(
                    "no rows to import: the file has a header but no records",
                    source=source,
                ) from None
            return
        except csv.Error as exc:
            raise DatasetImportError(str(exc), source=source, unit="line", number=start) from None
        previous_end = reader.line_num
        if not record:  # a blank line: skipped, but counted by line_num
            continue
        if len(record) != width:
            raise DatasetImportError(
                f"{len(record)} cells but the header has {width} columns ({', '.join(names)})",
                source=source,
                unit="line",
                number=start,
            )
        rows += 1
        row: dict[str, Any] = dict.fromkeys(names)
        for name, cell in zip(names, record, strict=False):
            row[name] = cell_text(cell)
        yield start, row


def decode_cell(field: str, value: Any) -> Any:
    """Parse a JSON-looking cell of a structured field; keep it as text if it is not JSON.

    Text that merely starts with a bracket (``[citation needed] ...``) is a legitimate
    input, so a failed parse is not an error here; ``metadata`` is checked later anyway.
    """
    if field in JSON_FIELDS and isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{") and stripped[-1:] in ("]", "}"):
            try:
                return json.loads(stripped)
            except ValueError:
                return value
    return value


def write(items: Iterable[Item], path: Path) -> int:
    """Write every Item field as a column; non-strings are JSON-encoded, ``None`` is empty."""
    count = 0
    with atomic_output(path) as tmp, open_text_write(tmp, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(ITEM_FIELDS)
        for item in items:
            writer.writerow(
                [
                    text_cell(item.id),
                    _cell(item, "input"),
                    _cell(item, "output"),
                    _cell(item, "expected_output"),
                    _cell(item, "context"),
                    _cell(item, "metadata") if item.metadata else "",
                ]
            )
            count += 1
    return count


def _cell(item: Item, name: str) -> str:
    value = getattr(item, name)
    if value is None:
        return ""
    if isinstance(value, str):
        return text_cell(value)
    try:
        return text_cell(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise DatasetError(f"item '{item.id}': field '{name}' is not JSON: {exc}") from None
