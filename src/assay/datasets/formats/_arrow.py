"""Arrow layout shared by the Parquet and Hugging Face writers/readers.

Item fields other than ``id`` hold arbitrary JSON (a string, a chat transcript, a list of
passages, a dict), which no single Arrow type captures across rows. They are stored as
string columns with a "text-or-json" encoding: a string that is not itself valid JSON is
stored as-is (so questions and answers stay readable in pandas or ``datasets``), anything
else (numbers, lists, dicts, and strings that would parse as JSON such as ``"42"``) is stored
as its JSON text. Decoding is the exact inverse, so round trips give back equal Items. The
schema metadata key ``assay`` names the encoded columns; files without it (written by other
tools) are read with their native Arrow types.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from assay.datasets.errors import DatasetError
from assay.datasets.formats._common import BATCH_ROWS
from assay.types import ITEM_FIELDS, Item

ASSAY_META_KEY = b"assay"
ENCODING = "text-or-json"
ENCODED_COLUMNS: tuple[str, ...] = ("input", "output", "expected_output", "context", "metadata")

_JSON_FIRST = frozenset('{["-0123456789tfnNI')
_NOT_JSON: Any = object()


def assay_schema_metadata() -> dict[bytes, bytes]:
    """Schema metadata declaring which columns use the text-or-json encoding."""
    info = {"format": 1, "encoding": ENCODING, "columns": list(ENCODED_COLUMNS)}
    return {ASSAY_META_KEY: json.dumps(info).encode()}


def item_schema(metadata: dict[bytes, bytes] | None = None) -> pa.Schema:
    """All Item fields as string columns (``id`` non-null), with the assay metadata."""
    fields = [pa.field("id", pa.string(), nullable=False)]
    fields += [pa.field(name, pa.string()) for name in ENCODED_COLUMNS]
    return pa.schema(fields, metadata={**assay_schema_metadata(), **(metadata or {})})


def encoded_columns(schema: pa.Schema) -> frozenset[str]:
    """Columns a file declares as text-or-json encoded (none for foreign files)."""
    raw = (schema.metadata or {}).get(ASSAY_META_KEY)
    if raw is None:
        return frozenset()
    try:
        info = json.loads(raw)
    except ValueError:
        return frozenset()
    if not isinstance(info, dict) or info.get("encoding") != ENCODING:
        return frozenset()
    return frozenset(str(c) for c in info.get("columns", ()))


def encode_value(value: Any) -> str | None:
    """Text-or-json encode one value (``None`` stays null)."""
    if value is None:
        return None
    if isinstance(value, str) and _loads(value) is _NOT_JSON:
        return value
    return json.dumps(value, ensure_ascii=False)


def decode_value(value: Any) -> Any:
    """Inverse of ``encode_value``; non-strings (foreign typed columns) pass through."""
    if not isinstance(value, str):
        return value
    parsed = _loads(value)
    return value if parsed is _NOT_JSON else parsed


def _loads(text: str) -> Any:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in _JSON_FIRST:
        return _NOT_JSON  # fast path: ordinary prose never starts like JSON
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def item_batches(
    items: Iterable[Item], schema: pa.Schema, batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Encode items into record batches of at most ``batch_rows`` rows, lazily."""
    columns: dict[str, list[str | None]] = {name: [] for name in ITEM_FIELDS}
    for item in items:
        columns["id"].append(item.id)
        for name in ENCODED_COLUMNS:
            value = getattr(item, name)
            if name == "metadata" and not value:
                value = None
            try:
                columns[name].append(encode_value(value))
            except (TypeError, ValueError) as exc:
                raise DatasetError(f"item '{item.id}': field '{name}' is not JSON: {exc}") from None
        if len(columns["id"]) >= batch_rows:
            yield pa.record_batch(list(columns.values()), schema=schema)
            columns = {name: [] for name in ITEM_FIELDS}
    if columns["id"]:
        yield pa.record_batch(list(columns.values()), schema=schema)


def batch_rows(
    batches: Iterable[pa.RecordBatch],
    encoded: frozenset[str],
    *,
    start: int = 1,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of record batches as ``(row_number, dict)``, decoding the encoded columns.

    Large batches are sliced so that only ``batch_rows`` rows are Python objects at once.
    """
    number = start - 1
    for batch in batches:
        for offset in range(0, batch.num_rows, batch_rows):
            chunk = batch.slice(offset, batch_rows)
            for row in chunk.to_pylist():
                number += 1
                for name in encoded:
                    if name in row:
                        row[name] = decode_value(row[name])
                yield number, row
