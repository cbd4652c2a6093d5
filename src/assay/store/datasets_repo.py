"""Datasets and their versioned items (SCD type 2, reference §5.2).

Every change batch — ``add_items``, ``update_item``, ``delete_items`` — bumps the dataset's
version exactly once, in one transaction with its item rows, so a run that pinned version N
always sees the same items: rows are only ever appended or closed (``valid_to`` set), never
rewritten. Items at version N are the rows with ``valid_from <= N`` and (``valid_to`` null or
``> N``) that are not tombstones, in ``position`` order (an item keeps its position across
updates, so reports line up between versions).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy import Connection, Row
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import IntegrityError

from assay.store.codec import chunked, dumps, escape_nul, loads, new_id, now
from assay.store.db import Database
from assay.store.errors import (
    DatasetExistsError,
    DatasetNotFoundError,
    DatasetVersionNotFoundError,
    DuplicateItemError,
    InvalidDatasetNameError,
    InvalidItemIdError,
    ItemExistsError,
    ItemNotFoundError,
)
from assay.store.records import DatasetInfo, DatasetVersion, ItemVersion
from assay.store.tables import dataset_items, dataset_versions, datasets, runs
from assay.types import UNADDRESSABLE_ID_PROBLEM, UNADDRESSABLE_IDS, Item

CONTENT_FIELDS: tuple[str, ...] = ("input", "output", "expected_output", "context", "metadata")
"""Item fields ``update_item`` may change (``id`` is the item's identity)."""

DatasetRef = str | DatasetInfo
"""A dataset by name, by id, or as returned by the repository."""


def as_item(value: Item | Mapping[str, Any]) -> Item:
    """An ``Item`` from an ``Item`` or a plain mapping (validated), to be written: an id no
    link can reach (``.``, ``..``) is an ``InvalidItemIdError``, and nothing of the write
    is stored."""
    if isinstance(value, Item):
        item = value
    elif isinstance(value, Mapping):
        item = Item.model_validate(dict(value))
    else:
        raise TypeError(f"expected an Item or a mapping, got {type(value).__name__}")
    if item.id in UNADDRESSABLE_IDS:
        raise InvalidItemIdError(item.id, UNADDRESSABLE_ID_PROBLEM)
    return item


def item_columns(item: Item) -> dict[str, Any]:
    """The content columns of an item row (shared with the runs' inline items)."""
    return {
        "item_id": item.id,
        "input": item.input,
        "output": item.output,
        "expected_output": item.expected_output,
        "context": item.context,
        "meta": item.metadata or None,
    }


def item_from_row(row: Row[Any]) -> Item:
    m = row._mapping
    return Item(
        id=m["item_id"],
        input=m["input"],
        output=m["output"],
        expected_output=m["expected_output"],
        context=m["context"],
        metadata=m["meta"] or {},
    )


def _info(row: Row[Any]) -> DatasetInfo:
    m = row._mapping
    return DatasetInfo(
        id=m["id"],
        name=m["name"],
        description=m["description"],
        metadata=m["meta"] or {},
        version=m["version"],
        item_count=m["item_count"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
    )


def _visible_at(version: int) -> sa.ColumnElement[bool]:
    t = dataset_items.c
    return sa.and_(
        t.valid_from <= version,
        sa.or_(t.valid_to.is_(None), t.valid_to > version),
        t.is_deleted.is_(False),
    )


OnExisting = Literal["error", "upsert", "skip"]
"""What ``add_items`` does with an id that is already a current item (see there)."""
ON_EXISTING: tuple[OnExisting, ...] = ("error", "upsert", "skip")


def _new_row(
    dataset_id: str, item: Item, version: int, position: int, stamp: float
) -> dict[str, Any]:
    return {
        **item_columns(item),
        "dataset_id": dataset_id,
        "valid_from": version,
        "valid_to": None,
        "is_deleted": False,
        "position": position,
        "created_at": stamp,
    }


def _same_json(a: Any, b: Any) -> bool:
    """JSON equality as the store keeps values (exactly, ``tables.JSONType``): numbers of the
    same type and, for floats, the same ``repr`` (``1.0`` is not ``1``, ``-0.0`` not ``0.0``,
    ``true`` not ``1``); object key order does not matter."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_content(stored: Item, new: Item) -> bool:
    """Whether ``new`` would store the same content columns as ``stored`` (both compared as
    the store encodes them, so a NaN that is stored as ``null`` compares equal to it)."""
    old_columns, new_columns = item_columns(stored), item_columns(new)
    return all(
        _same_json(
            None if old_columns[key] is None else loads(dumps(old_columns[key])),
            None if new_columns[key] is None else loads(dumps(new_columns[key])),
        )
        for key in ("input", "output", "expected_output", "context", "meta")
    )


def _driver(conn: Connection) -> Any:
    """The psycopg connection under ``conn`` (in the same transaction)."""
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("the database connection is closed")
    return driver


@contextmanager
def _custom_plans(conn: Connection) -> Iterator[None]:
    """On PostgreSQL, plan every statement of this transaction for its own parameters.

    psycopg prepares a statement server-side once it has run 5 times, and PostgreSQL may then
    reuse a generic plan made when the import had inserted only a few rows. For the chunked
    ``item_id IN (...)`` check that plan scanned every row of the dataset and compared it
    with the 1,000 parameters one by one: a 50,000-row import spent 134 of its 156 s there
    (quadratic in the import's size). The connection's setting is restored afterwards.
    """
    if conn.dialect.name != "postgresql":
        yield
        return
    driver = _driver(conn)
    previous = driver.prepare_threshold
    driver.prepare_threshold = None
    try:
        yield
    finally:
        driver.prepare_threshold = previous


_COPY_KEYS: tuple[str, ...] = (
    "dataset_id",
    "item_id",
    "valid_from",
    "valid_to",
    "is_deleted",
    "position",
    "input",
    "output",
    "expected_output",
    "context",
    "meta",
    "created_at",
)
_JSON_KEYS = frozenset(("input", "output", "expected_output", "context", "meta"))


def _copy_items(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``dataset_items`` rows with PostgreSQL's ``COPY FROM STDIN`` in the connection's
    transaction: one statement per chunk instead of one per row (``executemany``).

    COPY bypasses SQLAlchemy's column types, so this does their work: JSON values are encoded
    with the engine's serializer (``codec.dumps``, which escapes NUL characters), ``None``
    becomes SQL ``NULL`` (``none_as_null``) and item ids are NUL-escaped like ``NulSafeString``.
    A driver error is raised as SQLAlchemy's wrapper of it, as ``conn.execute`` would.
    """
    quote = conn.dialect.identifier_preparer
    columns = ", ".join(quote.quote(dataset_items.c[key].name) for key in _COPY_KEYS)
    statement = f"COPY {quote.format_table(dataset_items)} ({columns}) FROM STDIN"
    driver_error = conn.dialect.loaded_dbapi.Error
    try:
        with _driver(conn).cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(
                    [
                        escape_nul(row[key])
                        if key == "item_id"
                        else dumps(row[key])
                        if key in _JSON_KEYS and row[key] is not None
                        else row[key]
                        for key in _COPY_KEYS
                    ]
                )
    except driver_error as exc:
        raise sa.exc.DBAPIError.instance(
            statement, None, exc, driver_error, dialect=conn.dialect
        ) from exc


_REPEATED = "it occurs more than once in the new items"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
NAME_MAX = 255


def check_dataset_name(name: str) -> str:
    """The name as stored (stripped), or ``InvalidDatasetNameError``. Any other character
    (``/``, ``?``, ``#``, ``%``, spaces) is fine: links escape it as one path segment. ``.``
    and ``..`` are refused because browsers collapse them out of every URL (even escaped),
    and control characters because no one can type them back."""
    stripped = name.strip()
    if not stripped:
        raise InvalidDatasetNameError(name, "is empty")
    if stripped in (".", ".."):
        raise InvalidDatasetNameError(name, "cannot be addressed in a URL: choose another")
    if _CONTROL.search(stripped):
        raise InvalidDatasetNameError(name, "has control characters (tabs, newlines, ...)")
    if len(stripped) > NAME_MAX:
        raise InvalidDatasetNameError(name, f"is longer than {NAME_MAX} characters")
    return stripped


class DatasetRepository:
    """Create, change and read datasets. All methods are synchronous (call them from a
    thread in async code); each change is one transaction."""

    CHUNK = 1000
    """Rows per insert (``executemany``; ``COPY`` on PostgreSQL) / id lookup while streaming."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ datasets
    def create(
        self, name: str, *, description: str | None = None, metadata: dict[str, Any] | None = None
    ) -> DatasetInfo:
        """A new, empty dataset at version 0 (the reference's versions start at 0)."""
        name = check_dataset_name(name)
        stamp = now()
        dataset_id = new_id()
        row: dict[str, Any] = {
            "id": dataset_id,
            "name": name,
            "description": description,
            "meta": metadata or None,
            "version": 0,
            "item_count": 0,
            "created_at": stamp,
            "updated_at": stamp,
        }
        try:
            with self._db.write() as conn:
                if conn.execute(sa.select(datasets.c.id).where(datasets.c.name == name)).first():
                    raise DatasetExistsError(name)
                conn.execute(datasets.insert().values(row))
                self._record_version(conn, dataset_id, 0, stamp, "created", 0, 0, 0, 0)
        except IntegrityError as exc:  # a concurrent create of the same name won the race
            raise DatasetExistsError(name) from exc
        return DatasetInfo.model_validate({**row, "metadata": metadata or {}})

    def get(self, name_or_id: DatasetRef) -> DatasetInfo:
        """The dataset by name (first) or id; ``DatasetNotFoundError`` suggests close names."""
        with self._db.read() as conn:
            return _info(self._resolve(conn, name_or_id))

    def list(self) -> builtins.list[DatasetInfo]:
        with self._db.read() as conn:
            rows = conn.execute(sa.select(datasets).order_by(datasets.c.name)).all()
        return [_info(row) for row in rows]

    def delete(self, name_or_id: DatasetRef) -> None:
        """Delete a dataset with all its versions and items. Runs on it stay (they keep the
        dataset's name and version; their ``dataset_id`` becomes null)."""
        with self._db.write() as conn:
            found = self._resolve(conn, name_or_id, lock=True)
            conn.execute(datasets.delete().where(datasets.c.id == found.id))

    def rename(self, name_or_id: DatasetRef, new_name: str) -> DatasetInfo:
        """Give the dataset a new name, in one transaction with the runs on it (their
        ``dataset_name`` follows, so their links and "latest run on the same dataset" keep
        finding it). A taken name is ``DatasetExistsError``; renaming to its own name is a
        no-op."""
        new_name = check_dataset_name(new_name)
        try:
            with self._db.write() as conn:
                found = self._resolve(conn, name_or_id, lock=True)
                if new_name != found.name:
                    taken = sa.select(datasets.c.id).where(datasets.c.name == new_name)
                    if conn.execute(taken).first():
                        raise DatasetExistsError(new_name)
                    stamp = now()
                    conn.execute(
                        datasets.update()
                        .where(datasets.c.id == found.id)
                        .values(name=new_name, updated_at=stamp)
                    )
                    conn.execute(
                        runs.update()
                        .where(runs.c.dataset_id == found.id)
                        .values(dataset_name=new_name)
                    )
                row = conn.execute(sa.select(datasets).where(datasets.c.id == found.id)).one()
        except IntegrityError as exc:  # a concurrent create or rename took the name first
            raise DatasetExistsError(new_name) from exc
        return _info(row)

    # ------------------------------------------------------------------ changes
    def add_items(
        self,
        dataset: DatasetRef,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        note: str | None = None,
        on_existing: OnExisting = "error",
    ) -> int:
        """Add items as one new version and return it (the current version if nothing
        changed: no new version).

        ``items`` is consumed lazily in chunks inside a single transaction, so a large
        import streams, and an exception raised while iterating (a bad row found by the
        importer) rolls back everything: the dataset is unchanged. An id that occurs twice in
        ``items`` is a ``DuplicateItemError``; an id that was deleted earlier is added again
        (its history continues). An id that is already a current item is, by ``on_existing``:

        * ``"error"`` (default): an ``ItemExistsError`` naming the first such ids; nothing
          is stored;
        * ``"upsert"``: a new version of the item when its content differs (it keeps its
          position, as with ``update_item``), left alone when the content is the same;
        * ``"skip"``: left alone.

        The new version's ``added`` and ``updated`` counts say what changed. A plain add keeps
        no set of ids in memory (rows of earlier chunks are visible to the checks); with
        ``"upsert"``/``"skip"`` the ids left alone are kept, to refuse a repeat of one.
        """
        if on_existing not in ON_EXISTING:
            raise ValueError(
                f"on_existing must be one of {', '.join(ON_EXISTING)}, not {on_existing!r}"
            )
        t = dataset_items.c
        with self._db.write() as conn, _custom_plans(conn):
            ds = self._resolve(conn, dataset, lock=True)
            version = int(ds.version) + 1
            last = conn.execute(
                sa.select(sa.func.max(dataset_items.c.position)).where(
                    dataset_items.c.dataset_id == ds.id
                )
            ).scalar()
            position = -1 if last is None else int(last)
            stamp = now()
            added = updated = 0
            untouched: set[str] = set()
            for chunk in chunked(items, self.CHUNK):
                batch = [as_item(value) for value in chunk]
                current = self._open_rows(conn, ds, version, batch, on_existing == "upsert")
                close: list[int] = []
                existing: list[str] = []
                rows: list[dict[str, Any]] = []
                for item in batch:
                    row = current.get(item.id)
                    if item.id in untouched:
                        raise DuplicateItemError(f"dataset {ds.name!r}", item.id, _REPEATED)
                    if row is None or row.is_deleted:
                        if row is not None:  # the tombstone of a re-added id
                            close.append(row.row_id)
                        position += 1
                        rows.append(_new_row(ds.id, item, version, position, stamp))
                        added += 1
                    elif on_existing == "error":
                        existing.append(item.id)
                    elif on_existing == "upsert" and not _same_content(item_from_row(row), item):
                        close.append(row.row_id)
                        rows.append(_new_row(ds.id, item, version, row.position, stamp))
                        updated += 1
                    else:
                        untouched.add(item.id)
                if existing:
                    raise ItemExistsError(ds.name, existing)
                if close:  # before the inserts: one open row per item id (unique index)
                    conn.execute(
                        dataset_items.update().where(t.row_id.in_(close)).values(valid_to=version)
                    )
                if rows:
                    if conn.dialect.name == "postgresql":
                        _copy_items(conn, rows)
                    else:
                        conn.execute(dataset_items.insert(), rows)
            if added == updated == 0:
                return int(ds.version)
            count = ds.item_count + added
            self._record_version(conn, ds.id, version, stamp, note, added, updated, 0, count)
            self._bump(conn, ds.id, version, count, stamp)
        return version

    def update_item(self, dataset: DatasetRef, item_id: str, **fields: Any) -> int:
        """Change fields of a current item (omitted fields keep their values) as one new
        version; returns it. The item keeps its position."""
        unknown = sorted(set(fields) - set(CONTENT_FIELDS))
        if unknown:
            raise ValueError(
                f"cannot update field(s) {', '.join(unknown)} of item {item_id!r}; "
                f"updatable fields: {', '.join(CONTENT_FIELDS)}"
            )
        if not fields:
            raise ValueError(f"nothing to update for item {item_id!r}")
        t = dataset_items.c
        with self._db.write() as conn:
            ds = self._resolve(conn, dataset, lock=True)
            current = conn.execute(
                sa.select(dataset_items).where(
                    t.dataset_id == ds.id, t.item_id == item_id, t.valid_to.is_(None)
                )
            ).first()
            if current is None or current.is_deleted:
                raise ItemNotFoundError(ds.name, [item_id])
            merged = item_from_row(current).model_dump()
            merged.update(fields)
            item = Item.model_validate(merged)
            version = int(ds.version) + 1
            stamp = now()
            conn.execute(
                dataset_items.update().where(t.row_id == current.row_id).values(valid_to=version)
            )
            conn.execute(
                dataset_items.insert().values(
                    **item_columns(item),
                    dataset_id=ds.id,
                    valid_from=version,
                    valid_to=None,
                    is_deleted=False,
                    position=current.position,
                    created_at=stamp,
                )
            )
            self._record_version(
                conn, ds.id, version, stamp, f"update {item_id}", 0, 1, 0, ds.item_count
            )
            self._bump(conn, ds.id, version, ds.item_count, stamp)
        return version

    def delete_items(self, dataset: DatasetRef, ids: Iterable[str]) -> int:
        """Delete current items as one new version (each leaves a tombstone) and return it;
        every id must be a current item, else nothing is deleted. No ids: no new version."""
        wanted = list(dict.fromkeys(ids))
        t = dataset_items.c
        with self._db.write() as conn:
            ds = self._resolve(conn, dataset, lock=True)
            if not wanted:
                return int(ds.version)
            version = int(ds.version) + 1
            stamp = now()
            for chunk in chunked(wanted, self.CHUNK):
                rows = conn.execute(
                    sa.select(t.row_id, t.item_id, t.position).where(
                        t.dataset_id == ds.id,
                        t.item_id.in_(chunk),
                        t.valid_to.is_(None),
                        t.is_deleted.is_(False),
                    )
                ).all()
                found = {row.item_id for row in rows}
                missing = [item_id for item_id in chunk if item_id not in found]
                if missing:
                    raise ItemNotFoundError(ds.name, missing)
                conn.execute(
                    dataset_items.update()
                    .where(t.row_id.in_([row.row_id for row in rows]))
                    .values(valid_to=version)
                )
                conn.execute(
                    dataset_items.insert(),
                    [
                        {
                            "dataset_id": ds.id,
                            "item_id": row.item_id,
                            "valid_from": version,
                            "valid_to": None,
                            "is_deleted": True,
                            "position": row.position,
                            "input": None,
                            "output": None,
                            "expected_output": None,
                            "context": None,
                            "meta": None,
                            "created_at": stamp,
                        }
                        for row in rows
                    ],
                )
            count = ds.item_count - len(wanted)
            note = f"delete {len(wanted)} item(s)"
            self._record_version(conn, ds.id, version, stamp, note, 0, 0, len(wanted), count)
            self._bump(conn, ds.id, version, count, stamp)
        return version

    # ------------------------------------------------------------------ reads
    def items(
        self,
        dataset: DatasetRef,
        version: int | None = None,
        *,
        offset: int = 0,
        limit: int | None = None,
    ) -> Iterator[Item]:
        """The items at ``version`` (default: the latest) in position order, streamed in
        chunks. The dataset and version are checked now, not at the first ``next()``.

        Reading a pinned version is stable while the dataset keeps changing: later changes
        only append rows and close rows at versions above it.
        """
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError("offset and limit must not be negative")
        with self._db.read() as conn:
            ds = self._resolve(conn, dataset)
        pinned = self._check_version(ds, version)
        return self._stream_items(ds.id, pinned, offset, limit)

    def get_item(self, dataset: DatasetRef, item_id: str, version: int | None = None) -> Item:
        """One item as it was at ``version`` (default: the latest)."""
        t = dataset_items.c
        with self._db.read() as conn:
            ds = self._resolve(conn, dataset)
            pinned = self._check_version(ds, version)
            row = conn.execute(
                sa.select(dataset_items).where(
                    t.dataset_id == ds.id, t.item_id == item_id, _visible_at(pinned)
                )
            ).first()
        if row is None:
            raise ItemNotFoundError(ds.name, [item_id])
        return item_from_row(row)

    def count_items(self, dataset: DatasetRef, version: int | None = None) -> int:
        with self._db.read() as conn:
            ds = self._resolve(conn, dataset)
            pinned = self._check_version(ds, version)
            count = conn.execute(
                sa.select(dataset_versions.c.item_count).where(
                    dataset_versions.c.dataset_id == ds.id, dataset_versions.c.version == pinned
                )
            ).scalar_one()
        return int(count)

    def versions(self, dataset: DatasetRef) -> builtins.list[DatasetVersion]:
        v = dataset_versions.c
        with self._db.read() as conn:
            ds = self._resolve(conn, dataset)
            rows = conn.execute(
                sa.select(dataset_versions).where(v.dataset_id == ds.id).order_by(v.version)
            ).all()
        return [DatasetVersion.model_validate(dict(row._mapping)) for row in rows]

    def item_history(self, dataset: DatasetRef, item_id: str) -> builtins.list[ItemVersion]:
        """Every row of the item, oldest first (updates and deletions included)."""
        t = dataset_items.c
        with self._db.read() as conn:
            ds = self._resolve(conn, dataset)
            rows = conn.execute(
                sa.select(dataset_items)
                .where(t.dataset_id == ds.id, t.item_id == item_id)
                .order_by(t.valid_from)
            ).all()
        if not rows:
            raise ItemNotFoundError(ds.name, [item_id])
        return [
            ItemVersion(
                item_id=row.item_id,
                version=row.valid_from,
                valid_to=row.valid_to,
                deleted=row.is_deleted,
                item=None if row.is_deleted else item_from_row(row),
                position=row.position,
                created_at=row.created_at,
            )
            for row in rows
        ]

    # ------------------------------------------------------------------ helpers
    def _resolve(self, conn: Connection, ref: DatasetRef, *, lock: bool = False) -> Row[Any]:
        """The dataset row by name, then by id. ``lock`` serialises concurrent changes of one
        dataset on PostgreSQL (``FOR UPDATE``); SQLite's write lock already does."""
        key = ref.id if isinstance(ref, DatasetInfo) else ref
        for column in (datasets.c.name, datasets.c.id):
            query = sa.select(datasets).where(column == key)
            if lock:
                query = query.with_for_update()
            row = conn.execute(query).first()
            if row is not None:
                return row
        names = conn.execute(sa.select(datasets.c.name)).scalars().all()
        raise DatasetNotFoundError(key, names)

    @staticmethod
    def _check_version(ds: Row[Any], version: int | None) -> int:
        if version is None:
            return int(ds.version)
        if not 0 <= version <= ds.version:
            raise DatasetVersionNotFoundError(ds.name, version, ds.version)
        return version

    def _open_rows(
        self,
        conn: Connection,
        ds: Row[Any],
        version: int,
        batch: Sequence[Item],
        content: bool,
    ) -> dict[str, Row[Any]]:
        """The open rows (current items and tombstones) of the batch's ids, by id, with the
        content columns when ``content``. Refuses ids that repeat within the batch or were
        added by an earlier chunk of this same transaction (its rows are visible here, so no
        set of all ids has to be kept in memory)."""
        seen: set[str] = set()
        for item in batch:
            if item.id in seen:
                raise DuplicateItemError(f"dataset {ds.name!r}", item.id, _REPEATED)
            seen.add(item.id)
        t = dataset_items.c
        columns = [t.row_id, t.item_id, t.is_deleted, t.valid_from, t.position]
        if content:
            columns += [t.input, t.output, t.expected_output, t.context, t.meta]
        if conn.dialect.name == "postgresql":
            # One index probe per id (the unique index on open rows), whatever the planner
            # believes about a table this transaction is filling: a plain ``IN`` list got a
            # plan that filtered every row of the dataset, once per chunk.
            keys = (
                sa.func.unnest(
                    sa.bindparam(
                        "ids", [escape_nul(i) for i in seen], type_=postgresql.ARRAY(sa.Text())
                    )
                )
                .table_valued("item_id")
                .render_derived(name="k")
            )
            probe = (
                sa.select(*columns)
                .where(t.dataset_id == ds.id, t.item_id == keys.c.item_id, t.valid_to.is_(None))
                .limit(1)
                .lateral("d")
            )
            query = sa.select(*probe.c).select_from(keys).join(probe, sa.true())
        else:
            query = sa.select(*columns).where(
                t.dataset_id == ds.id, t.item_id.in_(seen), t.valid_to.is_(None)
            )
        found: dict[str, Row[Any]] = {}
        for row in conn.execute(query):
            if row.valid_from == version and not row.is_deleted:
                raise DuplicateItemError(f"dataset {ds.name!r}", row.item_id, _REPEATED)
            found[row.item_id] = row
        return found

    def _stream_items(
        self, dataset_id: str, version: int, offset: int, limit: int | None
    ) -> Iterator[Item]:
        """Keyset pagination on ``position``: one short read per chunk, no cursor held open
        while the caller works."""
        t = dataset_items.c
        remaining = limit
        after: int | None = None
        while remaining is None or remaining > 0:
            size = self.CHUNK if remaining is None else min(self.CHUNK, remaining)
            query = (
                sa.select(dataset_items)
                .where(t.dataset_id == dataset_id, _visible_at(version))
                .order_by(t.position)
                .limit(size)
            )
            query = query.offset(offset) if after is None else query.where(t.position > after)
            with self._db.read() as conn:
                rows = conn.execute(query).all()
            for row in rows:
                yield item_from_row(row)
            if len(rows) < size:
                return
            after = rows[-1].position
            if remaining is not None:
                remaining -= len(rows)

    @staticmethod
    def _record_version(
        conn: Connection,
        dataset_id: str,
        version: int,
        stamp: float,
        note: str | None,
        added: int,
        updated: int,
        deleted: int,
        item_count: int,
    ) -> None:
        conn.execute(
            dataset_versions.insert().values(
                dataset_id=dataset_id,
                version=version,
                created_at=stamp,
                note=note,
                added=added,
                updated=updated,
                deleted=deleted,
                item_count=item_count,
            )
        )

    @staticmethod
    def _bump(conn: Connection, dataset_id: str, version: int, count: int, stamp: float) -> None:
        conn.execute(
            datasets.update()
            .where(datasets.c.id == dataset_id)
            .values(version=version, item_count=count, updated_at=stamp)
        )
