"""Hugging Face ``datasets`` saved with ``save_to_disk``, without importing ``datasets``.

A saved ``Dataset`` is a directory with ``state.json`` (which lists the Arrow shards),
``dataset_info.json`` (features) and ``data-*.arrow`` files in Arrow IPC *stream* format. A
saved ``DatasetDict`` has ``dataset_dict.json`` listing splits, one such directory each.
Reading memory-maps the shards and walks them batch by batch, so nothing is loaded whole;
``datasets`` itself is only a test dependency, used to prove the layouts are compatible.

The writer produces the same layout (one shard, string features, the text-or-json encoding of
``_arrow`` marked in both the Arrow schema and ``dataset_info.json``), which
``datasets.load_from_disk`` loads as a plain ``Dataset``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from assay.datasets.errors import DatasetError
from assay.datasets.formats._arrow import (
    ENCODED_COLUMNS,
    batch_rows,
    encoded_columns,
    item_batches,
    item_schema,
)
from assay.datasets.formats._common import RowSource, atomic_output
from assay.datasets.formats.hf_layout import DICT_FILE, INFO_FILE, STATE_FILE, is_hf_dir
from assay.types import ITEM_FIELDS, Item

__all__ = ["DICT_FILE", "INFO_FILE", "STATE_FILE", "is_hf_dir", "open_rows", "write"]

SHARD_NAME = "data-00000-of-00001.arrow"
CONFIG_MARKER = "assay-text-or-json"
"""``config_name`` written into ``dataset_info.json``. ``datasets`` drops our Arrow schema
metadata when it re-saves a transformed dataset but keeps ``DatasetInfo``, so this marker is
what still identifies the encoded columns after a ``map(...).save_to_disk(...)``."""
DESCRIPTION = (
    "Items exported by assay. The columns input, output, expected_output, context and metadata"
    " hold plain text, or the JSON text of any other value (and of text that is itself JSON)."
)


def resolve_split(path: Path, split: str | None, *, source: str) -> Path:
    """The directory holding one Dataset: ``path`` itself, or ``path/split`` for a dict.

    A DatasetDict without ``split`` is an error listing the splits, because silently picking
    "train" would import the wrong data as easily as the right one.
    """
    dict_file = path / DICT_FILE
    if dict_file.is_file():
        splits = _read_json(dict_file, source).get("splits", [])
        names = ", ".join(str(s) for s in splits) or "none"
        if split is None:
            raise DatasetError(
                f"{source} is a DatasetDict with splits {names}: pass --split/split= naming one"
            )
        if split not in splits:
            raise DatasetError(f"{source} has no split '{split}' (splits: {names})")
        return path / split
    if not (path / STATE_FILE).is_file():
        raise DatasetError(
            f"{source} is not a Hugging Face dataset saved with save_to_disk (no {STATE_FILE})"
        )
    if split is not None:
        saved = _read_json(path / STATE_FILE, source).get("_split")
        if saved != split:
            raise DatasetError(
                f"{source} is a single Dataset"
                + (f" of split '{saved}'" if saved else " without splits")
                + f"; it has no split '{split}'"
            )
    return path


def open_rows(path: Path, *, source: str, split: str | None = None) -> RowSource:
    """Rows of a saved Dataset (or one split of a DatasetDict), by 1-based row number."""
    directory = resolve_split(path, split, source=source)
    state = _read_json(directory / STATE_FILE, source)
    files = [directory / str(entry["filename"]) for entry in state.get("_data_files", [])]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise DatasetError(f"{source}: missing data files: {', '.join(missing)}")
    info = _read_json(directory / INFO_FILE, source) if (directory / INFO_FILE).is_file() else {}
    marked = frozenset(ENCODED_COLUMNS) if info.get("config_name") == CONFIG_MARKER else frozenset()
    return RowSource(unit="row", rows=_rows(files, source, marked))


def _rows(
    files: list[Path], source: str, marked: frozenset[str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    last = 0  # row numbers continue across shards
    for file in files:
        with pa.memory_map(str(file)) as mapped:
            reader = _open_ipc(mapped, file, source)
            encoded = encoded_columns(reader.schema) or (marked & set(reader.schema.names))
            for number, row in batch_rows(_batches(reader), encoded, start=last + 1):
                last = number
                yield number, row


def _open_ipc(mapped: pa.MemoryMappedFile, file: Path, source: str) -> Any:
    """HF writes the IPC stream format; accept the file format too (other Arrow tools)."""
    try:
        return pa.ipc.open_stream(mapped)
    except pa.ArrowInvalid:
        mapped.seek(0)
        try:
            return pa.ipc.open_file(mapped)
        except pa.ArrowInvalid as exc:
            raise DatasetError(f"{source}: {file.name} is not an Arrow file: {exc}") from None


def _batches(reader: Any) -> Iterator[pa.RecordBatch]:
    if isinstance(reader, pa.ipc.RecordBatchFileReader):
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
    else:
        yield from reader


def _read_json(path: Path, source: str) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{source}: cannot read {path.name}: {exc}") from None
    if not isinstance(value, dict):
        raise DatasetError(f"{source}: {path.name} is not a JSON object")
    return value


def _features() -> dict[str, Any]:
    return {name: {"dtype": "string", "_type": "Value"} for name in ITEM_FIELDS}


def write(items: Iterable[Item], path: Path) -> int:
    """Write a single-shard saved Dataset at ``path`` (a directory).

    An existing directory is replaced only if it is itself a saved dataset (or empty), so a
    mistyped path cannot wipe an unrelated folder.
    """
    if path.exists() and not (path.is_dir() and (is_hf_dir(path) or not any(path.iterdir()))):
        raise DatasetError(
            f"{path} exists and is not a saved Hugging Face dataset; refusing to overwrite it"
        )
    features = _features()
    hf_meta = json.dumps({"info": {"features": features}}).encode()
    schema = item_schema({b"huggingface": hf_meta})
    count = 0
    with atomic_output(path, directory=True) as tmp:
        with pa.OSFile(str(tmp / SHARD_NAME), "wb") as sink, pa.ipc.new_stream(sink, schema) as w:
            for batch in item_batches(items, schema):
                w.write_batch(batch)
                count += batch.num_rows
        info = {
            "citation": "",
            "config_name": CONFIG_MARKER,
            "description": DESCRIPTION,
            "features": features,
            "homepage": "",
            "license": "",
        }
        state: dict[str, Any] = {
            "_data_files": [{"filename": SHARD_NAME}],
            "_fingerprint": secrets.token_hex(8),
            "_format_columns": None,
            "_format_kwargs": {},
            "_format_type": None,
            "_output_all_columns": False,
            "_split": None,
        }
        (tmp / INFO_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
        (tmp / STATE_FILE).write_text(json.dumps(state, indent=2), encoding="utf-8")
    return count
