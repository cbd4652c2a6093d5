"""``load_items``: one entry point for the runner's inline data.

``run_evals(data=...)`` accepts a file path or a list of dicts/Items; this normalises all of
them to a lazy ``Iterator[Item]`` with the same located errors as file imports. Ids must be
unique here because the runner keys results (and resume) by item id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from assay.datasets.convert import row_to_item
from assay.datasets.errors import DatasetError, DatasetImportError
from assay.datasets.io import MappingArg, read_items
from assay.datasets.mapping import RowMapper
from assay.types import UNADDRESSABLE_ID_PROBLEM, UNADDRESSABLE_IDS, Item


def load_items(
    source: str | os.PathLike[str] | Iterable[Item | Mapping[str, Any]],
    *,
    fmt: str | None = None,
    mapping: MappingArg = None,
    split: str | None = None,
    unique_ids: bool = True,
) -> Iterator[Item]:
    """Items from a file path (any supported format) or an iterable of dicts / Items.

    Dicts go through the same mapping and validation as file rows and are located as
    ``data[i]`` (0-based) in errors; Items pass through unchanged. Problems with the
    argument itself (a dict instead of a list, a missing file) raise immediately.
    """
    if isinstance(source, str | os.PathLike):
        items: Iterator[Item] = read_items(source, fmt=fmt, mapping=mapping, split=split)
        label = str(source)
    elif isinstance(source, Mapping | Item | bytes):
        raise DatasetError(
            f"data must be a path or a list of items, got a single {type(source).__name__}"
        )
    elif isinstance(source, Iterable):
        if fmt is not None or split is not None:
            raise DatasetError("fmt and split apply only when data is a path")
        items = _from_iterable(source, RowMapper(mapping))
        label = "data"
    else:
        raise DatasetError(f"data must be a path or a list of items, got {type(source).__name__}")
    return _unique(items, label) if unique_ids else items


def _from_iterable(
    entries: Iterable[Item | Mapping[str, Any]], mapper: RowMapper
) -> Iterator[Item]:
    for index, entry in enumerate(entries):
        if type(entry) is not dict and isinstance(entry, Item):  # a dict first: the usual row
            if entry.id in UNADDRESSABLE_IDS:  # as a row with this id is refused
                raise DatasetImportError(
                    f"{entry.id!r} {UNADDRESSABLE_ID_PROBLEM}",
                    source="data",
                    unit="index",
                    number=index,
                    field="id",
                )
            yield entry
        elif isinstance(entry, Mapping):
            yield row_to_item(
                entry, ordinal=index + 1, mapper=mapper, source="data", unit="index", number=index
            )
        else:
            raise DatasetImportError(
                f"expected a dict or an Item, got {type(entry).__name__}",
                source="data",
                unit="index",
                number=index,
            )


def _unique(items: Iterator[Item], label: str) -> Iterator[Item]:
    seen: dict[str, int] = {}
    for ordinal, item in enumerate(items, 1):
        first = seen.setdefault(item.id, ordinal)
        if first != ordinal:
            raise DatasetImportError(
                f"duplicate id '{item.id}' (items {first} and {ordinal}, counting from 1)",
                source=label,
                field="id",
            )
        yield item
