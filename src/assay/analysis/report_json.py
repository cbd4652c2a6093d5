"""JSON export of a run: its record (description, status, summary) and every item result.

``write_run_json`` streams: it serialises one result at a time, so exporting a million-row
run from the store costs the memory of one result. Both functions produce the same document
(``json.load(file) == run_report_dict(...)``). Output is strict JSON: a non-finite float in
a user's output becomes ``null`` rather than the non-standard ``NaN`` that other tools reject.
``write_json_file`` writes any other JSON document (a task's aggregates, a calibration
report) the same careful way: whole or not at all.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError

from assay.types import ItemResult, RunRecord

FORMAT = "assay.run"
FORMAT_VERSION = 1


def _finite(value: Any) -> Any:
    """Replace NaN/inf anywhere in a JSON-shaped value with ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _plain(model: RunRecord | ItemResult) -> Any:
    """A model as JSON-shaped data; arbitrary objects in ``Any`` fields become their repr
    instead of failing the whole export. A lone surrogate in an object key of an ``Any``
    field (a target's broken decoding), which pydantic's JSON mode refuses, is kept by its
    Python mode (the data is JSON-shaped as stored) and escaped by the file's writer."""
    try:
        data = model.model_dump(mode="json", fallback=repr)
    except (UnicodeEncodeError, PydanticSerializationError):
        data = model.model_dump(fallback=repr)
    return _finite(data)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _header(record: RunRecord) -> dict[str, Any]:
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "run": _plain(record)}


def run_report_dict(record: RunRecord, results: Iterable[ItemResult]) -> dict[str, Any]:
    """The whole export in memory (fine for small runs and tests)."""
    return {**_header(record), "results": [_plain(r) for r in results]}


def write_run_json(
    path: str | os.PathLike[str], record: RunRecord, results: Iterable[ItemResult]
) -> int:
    """Stream the export to ``path``; returns the number of results written.

    Written to a sibling temporary file and renamed at the end, so an interrupted export
    never leaves a truncated file under the final name.
    """
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    try:
        # a lone surrogate (UTF-8 cannot encode one) as its JSON escape \udXXX, which
        # ``json.load`` reads back as the same character
        with tmp.open("w", encoding="utf-8", errors="backslashreplace") as out:
            head = _dumps(_header(record))
            out.write(head[:-1] + ', "results": [')
            for result in results:
                out.write(",\n" if count else "\n")
                out.write(_dumps(_plain(result)))
                count += 1
            out.write("\n]}\n")
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def write_json_file(path: str | os.PathLike[str], value: Any) -> Path:
    """Write ``value`` as indented JSON (UTF-8, non-ASCII kept) to ``path``, creating its
    folder; through a sibling temporary file renamed at the end, so a failure never leaves
    half a document under the final name. Returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(value, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target
