"""Datasets between files and the store: import, export, add one item.

These are operations (``assay datasets import|export|add`` and the API call them): they
join the file formats of ``assay.datasets`` with the store.

An import is all-or-nothing: the items are validated *while* the store inserts them inside
``add_items``'s single transaction, so a bad line 7 (or line 900,000) raises out of the
iterator and the transaction rolls back. When the import also created the dataset, that
creation (its own transaction in the store's API) is undone too, so a failed import leaves
the database exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

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
    description: str | None = None,
) -> tuple[DatasetInfo, int]:
    """Add every item of ``path`` to ``dataset`` as one new version; return (info, count)
    (``count``: the items read). ``description`` is a dataset's it creates (an existing
    dataset keeps its own); a dataset it creates is removed again when the import fails.

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
            repo.create(dataset, description=description)
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


@dataclass(frozen=True)
class ImportReport:
    """What an import did: the dataset after it, the items read, and the new version's
    added/updated counts (none when nothing changed, e.g. an upsert of identical items)."""

    dataset: DatasetInfo
    read: int
    new_version: bool
    added: int
    updated: int

    @property
    def unchanged(self) -> int:
        """Items read that were left as they were."""
        return self.read - self.added - self.updated


def import_dataset(
    store: Store, path: str | os.PathLike[str], *, dataset: str, **options: Any
) -> ImportReport:
    """``import_file`` (same options), reporting what changed."""
    from assay.store.errors import DatasetNotFoundError

    before = None
    with contextlib.suppress(DatasetNotFoundError):
        before = store.datasets.get(dataset).version
    info, count = import_file(store, path, dataset=dataset, **options)
    changed = info.version != before
    last = store.datasets.versions(info.id)[-1] if changed else None
    return ImportReport(
        dataset=info,
        read=count,
        new_version=changed,
        added=last.added if last else 0,
        updated=last.updated if last else 0,
    )


def add_item(
    store: Store,
    dataset: str,
    *,
    input: Any = None,
    expected_output: Any = None,
    output: Any = None,
    context: Any = None,
    metadata: dict[str, Any] | None = None,
    item_id: str | None = None,
) -> tuple[Item, int]:
    """Add one item to ``dataset`` (a new version); returns the item and the version.

    Without ``item_id`` the item is ``item-N`` (N: the dataset's item count + 1). A bad
    field is a ``ValueError`` naming it."""
    info = store.datasets.get(dataset)
    fields: dict[str, Any] = {
        "id": item_id or f"item-{store.datasets.count_items(info.id) + 1}",
        "input": input,
        "expected_output": expected_output,
        "output": output,
        "context": context,
        "metadata": metadata or {},
    }
    try:
        item = Item.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "item"
        raise ValueError(f"field {where!r}: {first['msg']}") from exc
    return item, store.datasets.add_items(info.id, [item])
