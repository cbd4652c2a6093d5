"""The store's errors: each names the dataset, item or run it is about.

They subclass ``LookupError``/``ValueError`` as well as ``StoreError`` so callers can catch
them by meaning (a missing thing, a conflicting thing) or all at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


def _quoted(values: Iterable[str], limit: int = 5) -> str:
    items = list(values)
    shown = ", ".join(repr(v) for v in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


class DatasetNotFoundError(StoreError, LookupError):
    """No dataset with that name or id; suggests close names."""

    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        self.name = name
        self.suggestions = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
        message = f"dataset {name!r} not found"
        if self.suggestions:
            message += f"; did you mean {_quoted(self.suggestions)}?"
        super().__init__(message)


class DatasetExistsError(StoreError, ValueError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"dataset {name!r} already exists")


class InvalidDatasetNameError(StoreError, ValueError):
    """A name the dataset could not be addressed by (empty, ``.``/``..``, control
    characters): refused when the dataset is created or renamed, not found unreachable later."""

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        super().__init__(f"dataset name {name[:80]!r} {why}")


class InvalidItemIdError(StoreError, ValueError):
    """An item id no link can reach (``assay.types.UNADDRESSABLE_IDS``), refused when an
    item is written to a dataset or a run rather than stored unreachable."""

    def __init__(self, item_id: str, why: str) -> None:
        self.item_id = item_id
        super().__init__(f"item id {item_id!r} {why}")


class DatasetVersionNotFoundError(StoreError, LookupError):
    def __init__(self, dataset: str, version: int, latest: int) -> None:
        self.dataset = dataset
        self.version = version
        super().__init__(
            f"dataset {dataset!r} has no version {version} (versions are 0 to {latest})"
        )


class ItemNotFoundError(StoreError, LookupError):
    """The item ids are not current items of the dataset (never added, or deleted)."""

    def __init__(self, dataset: str, item_ids: Sequence[str]) -> None:
        self.dataset = dataset
        self.item_ids = list(item_ids)
        noun = "item" if len(self.item_ids) == 1 else "items"
        super().__init__(f"dataset {dataset!r} has no {noun} {_quoted(self.item_ids)}")


class DuplicateItemError(StoreError, ValueError):
    """An item id occurs twice in one dataset version (or in one run's data)."""

    def __init__(self, owner: str, item_id: str, detail: str) -> None:
        self.owner = owner
        self.item_id = item_id
        super().__init__(f"duplicate item id {item_id!r} in {owner}: {detail}")


class ItemExistsError(DuplicateItemError):
    """New items whose ids are already current items of the dataset (``add_items`` with
    ``on_existing="error"``). ``item_ids`` are the first ones found (one insert chunk's)."""

    def __init__(self, dataset: str, item_ids: Sequence[str]) -> None:
        self.dataset = dataset
        self.item_ids = list(item_ids)
        if len(self.item_ids) == 1:
            detail = "duplicate item id {} in dataset {!r}: it is already an item"
        else:
            detail = "duplicate item ids {} in dataset {!r}: they are already items"
        message = detail.format(_quoted(self.item_ids), dataset)
        self.owner = f"dataset {dataset!r}"
        self.item_id = self.item_ids[0]
        StoreError.__init__(self, message)


class RunNotFoundError(StoreError, LookupError):
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id!r} not found")


class AmbiguousRunIdError(StoreError, LookupError):
    def __init__(self, prefix: str, candidates: Sequence[str]) -> None:
        self.prefix = prefix
        self.candidates = list(candidates)
        super().__init__(
            f"run id prefix {prefix!r} is ambiguous: it matches {_quoted(self.candidates)}; "
            "give more characters"
        )


class RunExistsError(StoreError, ValueError):
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id!r} already exists")


class DuplicateResultError(StoreError, ValueError):
    """A result for an (item, repeat) the run already has: storing it would score it twice."""

    def __init__(self, run_id: str, keys: Sequence[tuple[str, int]]) -> None:
        self.run_id = run_id
        self.keys = list(keys)
        shown = _quoted(f"{item_id}#{repeat}" for item_id, repeat in self.keys)
        super().__init__(
            f"duplicate results for run {run_id!r}: {shown} (item#repeat) — a run stores one "
            "result per item and repeat; the batch was not written"
        )


class StoreWriteError(StoreError):
    """The store sink's background writer failed; results after the failure were not saved."""


class StoreUnavailableError(StoreError, RuntimeError):
    """The database cannot be used at all: unreachable, unreadable, damaged, read-only, or
    of an unsupported kind. The message is one line naming the database and what to do."""


def describe_database_error(exc: BaseException, url: str) -> str | None:
    """One line naming the database ``url`` and what to do about ``exc``, for the failures a
    user can fix (a read-only or damaged file, a file that is not a database, a server that
    does not answer); ``None`` when ``exc`` is not such a failure."""
    text = str(getattr(exc, "orig", None) or exc)
    lowered = text.lower()
    if "readonly database" in lowered or "read-only" in lowered:
        return (
            f"database {url} is read-only: make the file and its folder writable, or choose "
            "another database with --db / ASSAY_DATABASE_URL"
        )
    if "file is not a database" in lowered:
        return (
            f"database {url} is not an SQLite database: point --db / ASSAY_DATABASE_URL at "
            "an assay database, or at a new file name to create one"
        )
    if "malformed" in lowered or "database corrupt" in lowered:
        return (
            f"database {url} is damaged ({text.strip()}): restore a backup or move the file "
            "aside; `sqlite3 FILE .recover` may rescue its rows"
        )
    if "unable to open database file" in lowered:
        return (
            f"cannot open database {url}: check that its folder exists and is writable, or "
            "choose another with --db / ASSAY_DATABASE_URL"
        )
    if any(
        marker in lowered
        for marker in (
            "connection refused",
            "could not connect",
            "connection failed",
            "could not translate host name",
            "timeout expired",
            "no route to host",
            "name or service not known",
        )
    ):
        return (
            f"cannot reach the PostgreSQL server of {url}: is it running and accepting TCP "
            "connections? Check the host, port and credentials in --db / ASSAY_DATABASE_URL"
        )
    if "password authentication failed" in lowered or "does not exist" in lowered:
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return f"PostgreSQL refused {url}: {first}; check --db / ASSAY_DATABASE_URL"
    return None


class RunLeasedError(StoreError, ValueError):
    """The run is being executed (resumed) by another live process."""

    def __init__(self, run_id: str, owner: str, expires_at: float | None) -> None:
        import datetime as dt

        self.run_id = run_id
        self.owner = owner
        self.expires_at = expires_at
        host, _, rest = owner.partition(":")
        who = f"process {rest.partition(':')[0]} on {host}" if rest else owner
        until = (
            ""
            if expires_at is None
            else f"; its lease runs until {dt.datetime.fromtimestamp(expires_at):%H:%M:%S} "
            "unless renewed"
        )
        super().__init__(
            f"run {run_id[:8]} is being executed elsewhere ({who}){until}: wait for it to "
            "finish, or stop that process and resume again"
        )
