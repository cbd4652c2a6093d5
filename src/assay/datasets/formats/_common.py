"""Plumbing shared by the format modules: the row-source shape, text I/O, atomic output."""

from __future__ import annotations

import gzip
import io
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from assay.datasets.convert import FieldDecoder
from assay.datasets.errors import Unit

BATCH_ROWS = 2048
"""Rows converted to Python objects at a time by the Arrow-based readers and writers: large
enough to amortise per-batch overhead, small enough that memory stays flat."""


@dataclass
class RowSource:
    """A format reader's output: located raw rows plus how to fix up field values."""

    unit: Unit
    rows: Iterator[tuple[int, dict[str, Any]]]
    decode: FieldDecoder | None = None


def open_text_read(path: Path, *, newline: str | None = None) -> IO[str]:
    """Open a text file for reading, transparently gunzipping ``*.gz``.

    ``utf-8-sig`` drops a byte-order mark, which spreadsheet exports often prepend and which
    would otherwise end up in the first column name.
    """
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline=newline)
    return open(path, encoding="utf-8-sig", newline=newline)


def open_text_write(path: Path, *, newline: str | None = None) -> IO[str]:
    """Open a text file for writing; ``*.gz`` (judged by the final name) is gzipped."""
    if path.suffix == ".gz" or path.name.endswith(".gz.tmp"):
        return io.TextIOWrapper(gzip.open(path, "wb"), encoding="utf-8", newline=newline)
    return open(path, "w", encoding="utf-8", newline=newline)


@contextmanager
def atomic_output(path: Path, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; move it into place only if the block succeeds.

    An export that fails half-way (a non-serialisable value, a full disk) then leaves the
    previous file, or nothing, instead of a truncated file that looks valid.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = ".gz.tmp" if path.suffix == ".gz" else ".tmp"
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{suffix}")
    if directory:
        tmp.mkdir()
    try:
        yield tmp
        if directory and path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
