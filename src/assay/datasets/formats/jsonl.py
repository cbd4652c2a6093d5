"""JSON Lines: one JSON object per line, read and written one line at a time.

Blank lines are skipped but still counted, so the line numbers in errors match what an
editor shows. Values are native JSON, so a JSONL round trip is exact for any JSON-shaped item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.datasets.errors import DatasetError, DatasetImportError
from assay.datasets.formats._common import RowSource, atomic_output, open_text_write, text_lines
from assay.types import Item


def open_rows(path: Path, *, source: str, encoding: str | None = None) -> RowSource:
    """Rows of a JSONL file, located by 1-based line."""
    return RowSource(unit="line", rows=_rows(path, source, encoding))


def _rows(path: Path, source: str, encoding: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    seen = False
    for lineno, line in enumerate(text_lines(path, source=source, encoding=encoding), 1):
        if not line.strip():
            continue
        seen = True
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DatasetImportError(
                f"invalid JSON: {exc}", source=source, unit="line", number=lineno
            ) from None
        if not isinstance(value, dict):
            raise DatasetImportError(
                f"expected a JSON object, got {type(value).__name__}",
                source=source,
                unit="line",
                number=lineno,
            )
        yield lineno, value
    if not seen:
        raise DatasetImportError("the file is empty: no rows to import", source=source)


def write(items: Iterable[Item], path: Path) -> int:
    """Write one object per item; ``None`` fields and empty metadata are left out (they
    read back as the same defaults), keeping the file close to what a person would write."""
    count = 0
    with atomic_output(path) as tmp, open_text_write(tmp) as fh:
        for item in items:
            fh.write(dumps_item(item))
            fh.write("\n")
            count += 1
    return count


def dumps_item(item: Item) -> str:
    """One item as a compact JSON object (no ``None`` fields, no empty metadata)."""
    data: dict[str, Any] = {"id": item.id}
    for name in ("input", "output", "expected_output", "context"):
        value = getattr(item, name)
        if value is not None:
            data[name] = value
    if item.metadata:
        data["metadata"] = item.metadata
    try:
        return json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DatasetError(f"item '{item.id}' cannot be written as JSON: {exc}") from None
