"""Import item files into the store and export stored datasets to files.

An import is all-or-nothing: the items are validated *while* the store inserts them inside
``add_items``'s single transaction, so a bad line 7 (or line 900,000) raises out of the
iterator and the transaction rolls back. When the import also created the dataset, that
creation (its own transaction in the store's API) is undone too, so a failed import leaves
the database exactly as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from assay.datasets.io import MappingArg, read_items, write_items
from assay.types import Item

if TYPE_CHECKING:
    from assay.store import DatasetInfo, Store
    from assay.store.datasets_repo import OnExisting


class _Counter:
    """Counts items as the store consumes them (``add_items`` returns a version, not a count)."""

    def __init__(self, items: Iterable[Item]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[Item]:
        for item in self._items:
            self.count += 1
            yield item


def import_file(
    store: Store,
    path: str | os.PathLike[str],
    *,
    dataset: str,
    fmt: str | None = None,
    mapping: MappingArg = None,
    create: bool = True,
    split: str | None = None,
    note: str | None = None,
    encoding: str | None = None,
    upsert: bool = False,
    skip_existing: bool = False,
) -> tuple[DatasetInfo, int]:
    """Add every item of ``path`` to ``dataset`` as one new version; return (info, count)
    (``count``: the items read).

    Everything that can be checked without reading rows (path, format, mapping, split) is
    checked before the database is touched. ``create`` makes the dataset if it does not exist;
    without it a missing dataset is the store's ``DatasetNotFoundError``.

    Ids that are already items of the dataset are the store's ``ItemExistsError`` (a
    ``DuplicateItemError`` naming the first few), unless ``upsert`` (an item whose content
    changed becomes a new version of it, an unchanged one is left alone, new ids are added) or
    ``skip_existing`` (existing items are left alone, only new ids are added). Either way all
    changes form one new version, none if nothing changed; an id twice in the file is an error.
    """
    from assay.store.errors import DatasetExistsError, DatasetNotFoundError

    if upsert and skip_existing:
        raise ValueError("choose one of upsert and skip_existing, not both")
    on_existing: OnExisting = "upsert" if upsert else "skip" if skip_existing else "error"
    items = _Counter(read_items(path, fmt=fmt, mapping=mapping, split=split, encoding=encoding))
    repo = store.datasets
    created = False
    try:
        repo.get(dataset)
    except DatasetNotFoundError:
        if not create:
            raise
        try:
            repo.create(dataset)
            created = True
        except DatasetExistsError:  # a concurrent import created it first: add to it
            pass
    try:
        repo.add_items(
            dataset, items, note=note or f"import {Path(path).name}", on_existing=on_existing
        )
    except BaseException:
        if created:
            repo.delete(dataset)
        raise
    return repo.get(dataset), items.count


def export_file(
    store: Store,
    dataset: str,
    path: str | os.PathLike[str],
    *,
    version: int | None = None,
    fmt: str | None = None,
) -> int:
    """Write ``dataset`` (latest or pinned ``version``) to ``path``; returns the item count.

    Items are streamed from the database in position order straight into the writer.
    """
    repo = store.datasets
    repo.get(dataset)  # a missing dataset fails before any file is created
    return write_items(repo.items(dataset, version), path, fmt=fmt)
