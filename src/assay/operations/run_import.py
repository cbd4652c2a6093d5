"""Read a run exported as JSON (``assay runs export RUN -o run.json``) into a store.

``assay view run.json`` uses it to open someone else's run in the web UI without their
database: the file is loaded into a temporary SQLite store and served from there. The file
is outside input: it is checked field by field, and a bad document or result row is one
``RunImportError`` naming the row; the run is stored in full or (on an error) removed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from assay.types import ItemResult, RunRecord

if TYPE_CHECKING:
    from assay.store import Store

FORMAT = "assay.run"
BATCH = 1_000


class RunImportError(ValueError):
    """The file is not a run export assay can read; the message names the row or field."""


def read_run_export(path: str | Path) -> tuple[RunRecord, list[ItemResult]]:
    """The run record and results of an export file, validated."""
    source = Path(path)
    try:
        with source.open("rb") as handle:
            doc = json.load(handle)
    except OSError as exc:
        raise RunImportError(f"cannot read {source}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise RunImportError(f"{source}: not a JSON file ({_first_line(exc)})") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RunImportError(
            f'{source}: not a run export (expected "format": "{FORMAT}"; write one with '
            "`assay runs export RUN -o run.json`)"
        )
    try:
        record = RunRecord.model_validate(doc.get("run"))
    except ValidationError as exc:
        raise RunImportError(f"{source}: run: {_problem(exc)}") from exc
    rows = doc.get("results")
    if not isinstance(rows, list):
        raise RunImportError(f"{source}: 'results' must be a list")
    results: list[ItemResult] = []
    for index, row in enumerate(rows):
        try:
            results.append(ItemResult.model_validate(row))
        except ValidationError as exc:
            raise RunImportError(f"{source}: results[{index}]: {_problem(exc)}") from exc
    return record, results


def import_run(path: str | Path, store: Store) -> RunRecord:
    """Store the exported run of ``path`` (its dataset link dropped: the dataset is not in
    ``store``); returns the stored record."""
    record, results = read_run_export(path)
    info = record.info.model_copy(update={"dataset_id": None})
    seen: set[tuple[str, int]] = set()
    for index, result in enumerate(results):
        key = (result.item_id, result.repeat)
        if key in seen:
            raise RunImportError(
                f"{path}: results[{index}]: item {result.item_id!r} repeat {result.repeat} "
                "appears twice"
            )
        seen.add(key)
    store.runs.create(info)
    try:
        for start in range(0, len(results), BATCH):
            store.runs.write_results(info.id, results[start : start + BATCH])
        store.runs.finish(info.id, record.status, record.summary)
    except BaseException:
        store.runs.delete(info.id)
        raise
    return store.runs.get(info.id)


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
