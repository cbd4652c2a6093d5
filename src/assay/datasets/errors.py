"""Errors raised while reading, mapping and writing dataset files.

Every problem with a row carries its location (file, line or row number, the Item field and
the source column) so that a user fixing a 1M-line file can jump straight to the culprit:
``data.jsonl: line 7: field 'input': an item needs 'input' or 'output'``. All of them are
``ValueError`` subclasses, so callers that only care about "bad input" can catch that.
"""

from __future__ import annotations

from typing import Literal

Unit = Literal["line", "row", "index"]
"""How a row is located: ``line`` (1-based text line: JSONL, CSV), ``row`` (1-based row:
Parquet, Hugging Face) or ``index`` (0-based position in an in-memory list)."""


class DatasetError(ValueError):
    """A dataset source or option cannot be used: unknown format, missing split, bad path."""


class MappingError(DatasetError):
    """A ``--map`` specification is malformed or targets something that is not an Item field."""


class DatasetImportError(DatasetError):
    """One row could not become an Item; says where (file, line/row), which field and why."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        unit: Unit | None = None,
        number: int | None = None,
        field: str | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.unit = unit
        self.number = number
        self.field = field
        self.column = column
        super().__init__(self._render())

    @property
    def line(self) -> int | None:
        """The 1-based line (JSONL, CSV with the header as line 1), else ``None``."""
        return self.number if self.unit == "line" else None

    @property
    def row(self) -> int | None:
        """The 1-based row (Parquet, Hugging Face), else ``None``."""
        return self.number if self.unit == "row" else None

    def _render(self) -> str:
        parts: list[str] = []
        if self.unit == "index" and self.number is not None:
            parts.append(f"{self.source or 'data'}[{self.number}]")
        else:
            if self.source is not None:
                parts.append(self.source)
            if self.unit is not None and self.number is not None:
                parts.append(f"{self.unit} {self.number}")
        if self.field is not None:
            where = f"field '{self.field}'"
            if self.column is not None and self.column != self.field:
                where += f" (column '{self.column}')"
            parts.append(where)
        elif self.column is not None:
            parts.append(f"column '{self.column}'")
        parts.append(self.message)
        return ": ".join(parts)
