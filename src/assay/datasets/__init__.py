"""Dataset files: streaming readers and writers, field mapping, loading items.

(Import into and export from the store are operations: ``assay.operations.datasets``.)

Formats: JSON Lines, CSV, Parquet and Hugging Face ``datasets`` saved with ``save_to_disk``
(read and written with pyarrow; ``datasets`` is not needed at run time). Everything streams,
so a million-row file is never held in memory, and every row is validated into an
``assay.types.Item`` with errors that name the file, line/row, field and column.
"""

from __future__ import annotations

from assay.datasets.errors import DatasetError, DatasetImportError, MappingError
from assay.datasets.io import FORMATS, Format, detect_format, read_items, write_items
from assay.datasets.load import load_items
from assay.datasets.mapping import parse_mapping

__all__ = [
    "FORMATS",
    "DatasetError",
    "DatasetImportError",
    "Format",
    "MappingError",
    "detect_format",
    "load_items",
    "parse_mapping",
    "read_items",
    "write_items",
]
