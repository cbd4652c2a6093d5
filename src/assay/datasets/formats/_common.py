"""Plumbing shared by the format modules: the row-source shape, text I/O, atomic output."""

from __future__ import annotations

import codecs
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
from assay.datasets.errors import DatasetImportError, Unit

BATCH_ROWS = 2048
"""Rows converted to Python objects at a time by the Arrow-based readers and writers: large
enough to amortise per-batch overhead, small enough that memory stays flat."""


@dataclass
class RowSource:
    """A format reader's output: located raw rows plus how to fix up field values."""

    unit: Unit
    rows: Iterator[tuple[int, dict[str, Any]]]
    decode: FieldDecoder | None = None


DEFAULT_ENCODING = "utf-8"


def text_lines(path: Path, *, source: str, encoding: str | None = None) -> Iterator[str]:
    """The lines of a text file (``*.gz`` gunzipped), decoded one line at a time so that a
    byte that is not valid in ``encoding`` is reported at its exact line and column.

    Line endings are kept (the csv module needs them). With the default UTF-8, a byte-order
    mark at the start is dropped, since spreadsheet exports often prepend one and it would
    otherwise end up in the first column name. Encodings whose newline is not the byte
    ``\\n`` (UTF-16/32) are decoded as a whole stream instead.
    """
    codec = codecs.lookup(encoding or DEFAULT_ENCODING).name
    opener = gzip.open if path.suffix == ".gz" else open
    if codec.startswith(("utf-16", "utf-32")):
        with io.TextIOWrapper(opener(path, "rb"), encoding=codec, newline="") as fh:
            yield from _decoded_stream(fh, source, codec)
        return
    first = codec in ("utf-8", "utf-8-sig")
    with opener(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line: str = raw.decode(codec)
            except UnicodeDecodeError as exc:
                raise _decode_error(exc, source, codec, lineno) from None
            if first:
                line = line.removeprefix("\ufeff")
                first = False
            yield line


def _decoded_stream(fh: IO[str], source: str, codec: str) -> Iterator[str]:
    try:
        yield from fh
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, source, codec, None) from None


def _decode_error(
    exc: UnicodeDecodeError, source: str, codec: str, lineno: int | None
) -> DatasetImportError:
    bad = exc.object[exc.start : exc.start + 1]
    where = f", column {exc.start + 1}" if lineno is not None else ""
    return DatasetImportError(
        f"not valid {codec}: byte 0x{bad.hex()}{where} ({exc.reason}); if the file uses "
        "another encoding, say which with --encoding (e.g. --encoding cp1252)",
        source=source,
        unit="line",
        number=lineno,
    )


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
