"""Parquet via pyarrow, streamed by record batches in both directions.

Reading iterates ``ParquetFile.iter_batches`` so only one batch is decoded at a time;
writing groups items into batches that become row groups. Rows are located by 1-based row
number. Files written here use the text-or-json column encoding described in ``_arrow``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from assay.datasets.errors import DatasetError
from assay.datasets.formats._arrow import batch_rows, encoded_columns, item_batches, item_schema
from assay.datasets.formats._common import BATCH_ROWS, RowSource, atomic_output
from assay.types import Item

WRITE_BATCH_ROWS = 16_384
"""Items per row group when writing: big enough for good compression and fast scans."""


def open_rows(path: Path, *, source: str) -> RowSource:
    """Rows of a Parquet file; the footer is read now so a non-Parquet file fails early."""
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{source}: not a readable Parquet file: {exc}") from None
    return RowSource(unit="row", rows=_rows(parquet))


def _rows(parquet: pq.ParquetFile) -> Iterator[tuple[int, dict[str, Any]]]:
    encoded = encoded_columns(parquet.schema_arrow)
    try:
        yield from batch_rows(parquet.iter_batches(batch_size=BATCH_ROWS), encoded)
    finally:
        parquet.close()


def write(items: Iterable[Item], path: Path) -> int:
    """Write items in row groups of ``WRITE_BATCH_ROWS``; never holds more than one group."""
    schema = item_schema()
    count = 0
    with atomic_output(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
        for batch in item_batches(items, schema, WRITE_BATCH_ROWS):
            writer.write_batch(batch)
            count += batch.num_rows
    return count
