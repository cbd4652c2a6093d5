"""Read and write item files in any supported format, chosen by extension or by name.

``read_items`` checks everything it can up front (the path exists, the format is known, the
mapping is valid, a DatasetDict split is named) and raises immediately; row problems surface
while iterating, located by line or row. Both directions stream: a reader holds one line or
one Arrow batch at a time, a writer one batch.
"""

from __future__ import annotations

import codecs
import importlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Literal

from assay.datasets.convert import rows_to_items
from assay.datasets.errors import DatasetError
from assay.datasets.mapping import RowMapper
from assay.extras import require_extra
from assay.types import Item

Format = Literal["jsonl", "csv", "parquet", "hf"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "parquet", "hf")

_ALIASES: dict[str, Format] = {
    "jsonl": "jsonl",
    "ndjson": "jsonl",
    "jsonlines": "jsonl",
    "csv": "csv",
    "parquet": "parquet",
    "pq": "parquet",
    "hf": "hf",
    "huggingface": "hf",
    "datasets": "hf",
}
_EXTENSIONS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}

PathArg = str | os.PathLike[str]
MappingArg = Iterable[str] | Mapping[str, str] | None


def detect_format(path: PathArg, fmt: str | None = None, *, writing: bool = False) -> Format:
    """The format for ``path``: ``fmt`` if given, else from the extension or directory.

    A directory is a Hugging Face ``save_to_disk`` dataset. When writing, a path without any
    extension is taken as one too (that is how ``save_to_disk`` paths look).
    """
    if fmt is not None:
        try:
            return _ALIASES[fmt.strip().lower()]
        except KeyError:
            raise DatasetError(
                f"unknown dataset format '{fmt}' (formats: {', '.join(FORMATS)})"
            ) from None
    p = Path(path)
    if p.is_dir():
        return "hf"
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
        if suffixes and _EXTENSIONS.get(suffixes[-1]) not in ("jsonl", "csv"):
            raise DatasetError(f"{path}: only .jsonl.gz and .csv.gz may be gzipped")
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    if writing and not p.suffix:
        return "hf"
    hint = " (JSON Lines files use .jsonl: one object per line)" if p.suffix == ".json" else ""
    raise DatasetError(
        f"{path}: cannot tell the format from the name{hint}; pass a format ({', '.join(FORMATS)})"
    )


_NEEDS_PARQUET_EXTRA = {"parquet": "the Parquet format", "hf": "the Hugging Face dataset format"}
"""The formats read and written with pyarrow, which comes with the ``parquet`` extra."""


def _module(fmt: Format) -> ModuleType:
    """The format's module, imported now; pyarrow's formats check their extra first."""
    if fmt in _NEEDS_PARQUET_EXTRA:
        require_extra("parquet", _NEEDS_PARQUET_EXTRA[fmt])
    return importlib.import_module(f"assay.datasets.formats.{fmt}")


def read_items(
    path: PathArg,
    *,
    fmt: str | None = None,
    mapping: MappingArg = None,
    split: str | None = None,
    encoding: str | None = None,
) -> Iterator[Item]:
    """Stream the Items of a JSONL, CSV, Parquet or saved Hugging Face dataset.

    ``mapping`` is ``{"input": "question"}`` or ``["input=question"]`` (see
    ``parse_mapping``). ``split`` names a split of a saved ``DatasetDict``. Rows without an
    ``id`` get their 1-based row ordinal as id. ``encoding`` is the text encoding of a JSONL
    or CSV file (default UTF-8); an undecodable byte is an error naming its line.
    """
    p = Path(path)
    source = str(path)
    if not p.exists():
        raise DatasetError(f"{source}: no such file or directory")
    kind = detect_format(p, fmt)
    if split is not None and kind != "hf":
        raise DatasetError(f"{source}: split applies only to Hugging Face datasets, not {kind}")
    if encoding is not None:
        if kind not in ("jsonl", "csv"):
            raise DatasetError(f"{source}: encoding applies only to JSONL and CSV, not {kind}")
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise DatasetError(f"unknown encoding {encoding!r}") from None
    mapper = RowMapper(mapping)
    if kind == "hf":
        rows = _module("hf").open_rows(p, source=source, split=split)
    else:
        if p.is_dir():
            raise DatasetError(f"{source} is a directory, not a {kind} file")
        rows = _module(kind).open_rows(p, source=source, **_encoding_arg(kind, encoding))
    return rows_to_items(
        rows.rows, source=source, unit=rows.unit, mapper=mapper, decode=rows.decode
    )


def _encoding_arg(kind: Format, encoding: str | None) -> dict[str, str]:
    return {"encoding": encoding} if encoding is not None and kind in ("jsonl", "csv") else {}


def write_items(items: Iterable[Item], path: PathArg, *, fmt: str | None = None) -> int:
    """Stream ``items`` into ``path`` (atomically: a failed write leaves no partial file).

    Returns the number of items written. See each format module for how values are encoded.
    """
    kind = detect_format(path, fmt, writing=True)
    count: int = _module(kind).write(items, Path(path))
    return count
