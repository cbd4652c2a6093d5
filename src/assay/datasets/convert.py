"""Turn source rows (plain dicts from any format) into validated Items.

This is the one place where rows become Items, so every format reports problems the same
way: a ``DatasetImportError`` naming the file, the line or row, the Item field and the
source column. It works one row at a time, so readers can stay streaming generators.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from assay.datasets.errors import DatasetImportError, Unit
from assay.datasets.mapping import MissingColumnError, RowMapper
from assay.types import UNADDRESSABLE_ID_PROBLEM, UNADDRESSABLE_IDS, Item

FieldDecoder = Callable[[str, Any], Any]
"""Per-format fix-up of an Item field's raw value (CSV parses JSON-looking cells)."""


def rows_to_items(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    *,
    source: str | None,
    unit: Unit,
    mapper: RowMapper | None = None,
    decode: FieldDecoder | None = None,
) -> Iterator[Item]:
    """Validate ``(number, row)`` pairs lazily into Items.

    ``number`` is the location reported in errors (line, row or index). An item without an
    ``id`` gets its 1-based ordinal among the rows as id: stable only as long as the file's
    row order is, which is why an ``id`` column is recommended for data that is re-imported.
    """
    mapper = mapper or RowMapper()
    for ordinal, (number, row) in enumerate(rows, 1):
        yield row_to_item(
            row,
            ordinal=ordinal,
            mapper=mapper,
            decode=decode,
            source=source,
            unit=unit,
            number=number,
        )


def row_to_item(
    row: Mapping[str, Any],
    *,
    ordinal: int,
    mapper: RowMapper,
    decode: FieldDecoder | None = None,
    source: str | None = None,
    unit: Unit | None = None,
    number: int | None = None,
) -> Item:
    """Map, decode and validate one row; any failure is located and re-raised."""

    def fail(message: str, field: str | None, column: str | None = None) -> DatasetImportError:
        if column is None and field is not None:
            column = mapper.mapping.get(field, field)
        return DatasetImportError(
            message, source=source, unit=unit, number=number, field=field, column=column
        )

    try:
        mapped = mapper.apply(row)
    except MissingColumnError as exc:
        raise fail(str(exc), exc.field, exc.column) from None
    fields = mapped.fields
    if decode is not None:
        for name, value in fields.items():
            fields[name] = decode(name, value)

    raw_metadata = fields.pop("metadata", None)
    metadata = _metadata_dict(raw_metadata)
    if metadata is None:
        raise fail(f"expected a JSON object, got {_preview(raw_metadata)}", "metadata")
    if mapped.extras:
        metadata = {**mapped.extras, **metadata}
    for keys, value in mapped.metadata_keys:
        target = metadata
        for key in keys[:-1]:
            nested = target.get(key)
            if nested is None:
                nested = target[key] = {}
            elif not isinstance(nested, dict):
                raise fail(f"cannot set '{'.'.join(keys)}': '{key}' is not an object", "metadata")
            target = nested
        target[keys[-1]] = value
    fields["metadata"] = metadata

    item_id = fields.get("id")
    if item_id is None:
        fields["id"] = str(ordinal)
    elif isinstance(item_id, int) and not isinstance(item_id, bool):
        fields["id"] = str(item_id)
    elif isinstance(item_id, str) and item_id in UNADDRESSABLE_IDS:
        # browsers drop "." and ".." segments from every URL, escaped or not: such an item's
        # page could never be opened, reviewed or annotated in the web UI
        raise fail(f"{item_id!r} {UNADDRESSABLE_ID_PROBLEM}", "id")

    try:
        return Item(**fields)
    except ValidationError as exc:
        field, message = _describe(exc)
        raise fail(message, field) from None


def _metadata_dict(value: Any) -> dict[str, Any] | None:
    """``metadata`` as a fresh dict: ``None`` -> ``{}``, JSON object text parsed, else None.

    Text is accepted because CSV cells and foreign Parquet/Arrow files often hold metadata as
    a JSON string; anything that is not an object is rejected rather than guessed at.
    """
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return dict(parsed) if isinstance(parsed, dict) else None
    return None


def _describe(exc: ValidationError) -> tuple[str | None, str]:
    errors = exc.errors(include_url=False)
    first = errors[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    loc = first["loc"]
    if loc:
        field: str | None = str(loc[0])
        message += f" (got {_preview(first.get('input'))})"
    else:
        # The model-level rule "needs input or output" is about the input field in practice.
        field = "input" if "'input'" in message else None
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return field, message


def _preview(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
