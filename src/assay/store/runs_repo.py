"""Runs, their inline items and their results.

A run row is written once when the run is created and then only changes status, counters
and summary. Results are append-only: ``(run_id, item_id, repeat)`` is unique, which is what
makes resume safe — ``completed_keys`` tells the runner what is already stored, and a second
copy of a result is refused rather than silently scored twice.
"""

from __future__ import annotations

import builtins
import functools
import os
import secrets
import socket
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Row
from sqlalchemy.exc import IntegrityError

from assay.store.codec import chunked, now, unescape_nul
from assay.store.datasets_repo import as_item
from assay.store.db import Database
from assay.store.errors import (
    AmbiguousRunIdError,
    DatasetNotFoundError,
    DuplicateItemError,
    DuplicateResultError,
    RunExistsError,
    RunLeasedError,
    RunNotFoundError,
)
from assay.store.item_scores import add_item_scores
from assay.store.result_export import json_text_value
from assay.store.result_inserts import (
    RUN_ITEM_COLUMNS,
    EncodedResult,
    encode_results,
    insert_result_rows,
    insert_sql,
    result_key,
    run_item_row,
    target_failed,
)
from assay.store.results_codec import build_results, result_rows
from assay.store.summary_source import StoredSummarySource
from assay.store.tables import (
    datasets,
    item_results,
    judge_calls,
    run_items,
    run_tags,
    runs,
    scores,
)
from assay.types import (
    Item,
    ItemResult,
    RunInfo,
    RunRecord,
    RunStatus,
    RunSummary,
    ScoreRow,
    ScorerSpec,
    TargetSpec,
    check_tags,
)

_RESULT_ORDER = (item_results.c.position, item_results.c.repeat, item_results.c.item_id)


def insert_results(
    conn: Connection, run_id: str, results: Sequence[ItemResult], *, skip_stored: bool = False
) -> int:
    """Insert results with their scores and judge calls and add them to the run's counters,
    inside the caller's transaction (``write_results``; a scaled-out worker's
    ``WorkUnitRepository.complete``, which stores only the units it still owns). Returns how
    many results were stored.

    ``skip_stored``: a result whose (item, repeat) the run already holds is left out, with
    its scores and calls, instead of failing the transaction. Scaled-out workers need it: a
    unit can be seeded again by a resuming driver while the dead driver's worker is still
    storing it, and the one that commits second must store nothing, not abort its batch."""
    if not results:
        return 0
    if not skip_stored:  # the hot path (every stored run's writer): see ``result_inserts``
        return insert_encoded(conn, run_id, encode_results(run_id, results))
    item_rows, score_rows, call_rows = result_rows(run_id, results)
    item_rows, score_rows, call_rows = _new_rows_only(conn, item_rows, score_rows, call_rows)
    if not item_rows:
        return 0
    kept = {(row["item_id"], row["repeat"]) for row in item_rows}
    results = [result for result in results if (result.item_id, result.repeat) in kept]
    failed = sum(1 for result in results if result.error is not None)
    _add_to_counters(conn, run_id, len(results), failed)
    if score_rows:
        conn.execute(scores.insert(), score_rows)
    if call_rows:
        conn.execute(judge_calls.insert(), call_rows)
    add_item_scores(conn, run_id, results)
    return len(results)


def insert_encoded(conn: Connection, run_id: str, encoded: Sequence[EncodedResult]) -> int:
    """Insert results already encoded (``result_inserts.encode_result``: the store writer's
    queue holds them so) with their scores and judge calls, add them to the run's counters
    and per-item aggregates, inside the caller's transaction. Returns how many were stored."""
    if not encoded:
        return 0
    _add_to_counters(conn, run_id, len(encoded), sum(1 for e in encoded if target_failed(e)))
    insert_result_rows(conn, run_id, encoded)
    add_item_scores(conn, run_id, encoded)
    return len(encoded)


def _add_to_counters(conn: Connection, run_id: str, stored: int, failed: int) -> None:
    updated = conn.execute(
        runs.update()
        .where(runs.c.id == run_id)
        .values(
            completed_results=runs.c.completed_results + stored,
            failed_results=runs.c.failed_results + failed,
            updated_at=now(),
        )
    )
    if updated.rowcount == 0:
        raise RunNotFoundError(run_id)


def _new_rows_only(
    conn: Connection,
    item_rows: list[dict[str, Any]],
    score_rows: list[dict[str, Any]],
    call_rows: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Insert ``item_rows`` that are not stored yet (ON CONFLICT DO NOTHING on the run's
    (item, repeat) key, so a concurrent writer cannot slip in between a check and the
    insert) and return the rows that went in, with the score and call rows that belong
    to them, still to be inserted."""
    from sqlalchemy.dialects import postgresql, sqlite

    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    # one multi-row statement; RETURNING names exactly the rows that went in
    returned = conn.execute(
        insert(item_results)
        .on_conflict_do_nothing(index_elements=["run_id", "item_id", "repeat"])
        .returning(item_results.c.id),
        item_rows,
    )
    inserted = {str(row_id) for row_id in returned.scalars()}
    kept_items = [row for row in item_rows if row["id"] in inserted]
    kept_scores = [row for row in score_rows if row["result_id"] in inserted]
    score_ids = {row["id"] for row in kept_scores}
    kept_calls = [row for row in call_rows if row["score_id"] in score_ids]
    return kept_items, kept_scores, kept_calls


@functools.cache
def _earlier_item_sql(count: int, paramstyle: str) -> str:
    """Driver SQL: is one of ``count`` item ids already among the run's inline items? (As
    an SQLAlchemy ``IN`` of 500 ids it was compiled anew for every chunk, ≈ 9 µs/item of a
    stored run.)"""
    marker = "?" if paramstyle == "qmark" else "%s"
    listed = ", ".join(marker for _ in range(count))
    return (
        f"SELECT item_id FROM run_items WHERE run_id = {marker} AND item_id IN ({listed}) LIMIT 1"
    )


def _record(row: Row[Any], tags: builtins.list[str] | None = None) -> RunRecord:
    m = row._mapping
    info = RunInfo(
        id=m["id"],
        name=m["name"],
        dataset_id=m["dataset_id"],
        dataset_name=m["dataset_name"],
        dataset_version=m["dataset_version"],
        data_source=m["data_source"],
        target=TargetSpec.model_validate(m["target"]),
        scorers=[ScorerSpec.model_validate(spec) for spec in m["scorers"] or []],
        concurrency=m["concurrency"],
        repeats=m["repeats"],
        threshold=m["threshold"],
        total_items=m["total_items"],
        metadata=m["meta"] or {},
        created_at=m["created_at"],
        tags=tags or [],
        backend=m["backend"] or "local",
        workers=m["workers"],
    )
    summary = m["summary"]
    status = m["status"]
    if status == "running" and not lease_is_live(m["lease_owner"], m["lease_expires_at"]):
        status = "interrupted"  # killed: no process holds the run any more
    return RunRecord(
        info=info,
        status=status,
        completed_results=m["completed_results"],
        failed_results=m["failed_results"],
        started_at=m["started_at"],
        completed_at=m["completed_at"],
        summary=None if summary is None else RunSummary.model_validate(summary),
    )


LEASE_S = 60.0
"""How long a run's lease lasts without renewal; the executing process renews it every
``LEASE_S / 4`` seconds, so a killed process's run shows as interrupted within a minute (at
once on the same host, where a dead pid is recognised)."""


def new_lease_owner() -> str:
    """``host:pid:token`` naming this process (and this execution) as a run's lease owner."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _owner_is_gone(owner: str) -> bool:
    """True when ``owner`` is a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return False


def lease_is_live(owner: str | None, expires_at: float | None) -> bool:
    """Whether a run is held by a live process: an unexpired lease whose owner is not a dead
    process of this host."""
    if owner is None or expires_at is None or expires_at < now():
        return False
    return not _owner_is_gone(owner)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class RunRepository:
    """Store and read runs. Synchronous; every write is one transaction."""

    CHUNK = 500
    """Results per read chunk, ids per ``IN (...)`` list, inline items per insert."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ runs
    def create(
        self, info: RunInfo, items: Iterable[Item | Mapping[str, Any]] | None = None
    ) -> RunRecord:
        """Record a new ``pending`` run, with its inline items (runs without a stored
        dataset) so ``assay runs resume`` can finish it without the original data.

        Items stream in chunks inside the same transaction as the run row: either the run
        exists with all its items, or not at all. ``total_items`` defaults to their count.
        """
        stamp = now()
        created = info.created_at or stamp
        with self._db.write() as conn:
            if conn.execute(sa.select(runs.c.id).where(runs.c.id == info.id)).first():
                raise RunExistsError(info.id)
            if info.dataset_id is not None:
                known = conn.execute(
                    sa.select(datasets.c.id).where(datasets.c.id == info.dataset_id)
                ).first()
                if known is None:
                    names = conn.execute(sa.select(datasets.c.name)).scalars().all()
                    raise DatasetNotFoundError(info.dataset_name or info.dataset_id, names)
            conn.execute(
                runs.insert().values(
                    id=info.id,
                    name=info.name,
                    dataset_id=info.dataset_id,
                    dataset_name=info.dataset_name,
                    dataset_version=info.dataset_version,
                    data_source=info.data_source,
                    target_kind=info.target.kind,
                    target_label=info.target.label,
                    target=info.target.model_dump(mode="json"),
                    scorers=[spec.model_dump(mode="json") for spec in info.scorers],
                    concurrency=info.concurrency,
                    repeats=info.repeats,
                    threshold=info.threshold,
                    total_items=info.total_items,
                    meta=info.metadata or None,
                    backend=info.backend,
                    workers=info.workers,
                    status="pending",
                    completed_results=0,
                    failed_results=0,
                    summary=None,
                    created_at=created,
                    started_at=None,
                    completed_at=None,
                    updated_at=stamp,
                )
            )
            if info.tags:
                conn.execute(run_tags.insert(), [{"run_id": info.id, "tag": t} for t in info.tags])
            if items is not None:
                count = self._insert_items(conn, info.id, items)
                if info.total_items is None:
                    conn.execute(
                        runs.update().where(runs.c.id == info.id).values(total_items=count)
                    )
            row = conn.execute(sa.select(runs).where(runs.c.id == info.id)).one()
        return _record(row, list(info.tags))

    def get(self, run_id: str) -> RunRecord:
        """The run with this id, or with this unique id prefix."""
        with self._db.read() as conn:
            resolved = self._resolve(conn, run_id)
            row = conn.execute(sa.select(runs).where(runs.c.id == resolved)).one()
            tags = self._tags_of(conn, [resolved])
        return _record(row, tags.get(resolved))

    def exists(self, run_id: str) -> bool:
        """Whether a run with exactly this id is stored."""
        with self._db.read() as conn:
            return conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is not None

    def list(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        dataset: str | None = None,
        tag: str | None = None,
        name: str | None = None,
    ) -> builtins.list[RunRecord]:
        """Runs, newest first; ``dataset`` filters by dataset name or id, ``tag`` to runs
        carrying that tag, ``name`` to runs of that name."""
        query = sa.select(runs).order_by(runs.c.created_at.desc(), runs.c.id.desc())
        if dataset is not None:
            query = query.where(
                sa.or_(runs.c.dataset_name == dataset, runs.c.dataset_id == dataset)
            )
        if tag is not None:
            tagged = sa.select(run_tags.c.run_id).where(run_tags.c.tag == tag)
            query = query.where(runs.c.id.in_(tagged))
        if name is not None:
            query = query.where(runs.c.name == name)
        with self._db.read() as conn:
            rows = conn.execute(query.limit(limit).offset(offset)).all()
            tags = self._tags_of(conn, [row.id for row in rows])
        return [_record(row, tags.get(row.id)) for row in rows]

    def latest_with_tag(self, tag: str, *, name: str | None = None) -> RunRecord | None:
        """The newest run carrying ``tag`` (and named ``name``, when given), or ``None``."""
        found = self.list(limit=1, tag=tag, name=name)
        return found[0] if found else None

    def add_tags(self, run_id: str, tags: Iterable[str]) -> None:
        """Put ``tags`` on the run (exact id); tags it has already are left as they are."""
        wanted = check_tags(tags)
        with self._db.write() as conn:
            self._require(conn, run_id)
            have = set(self._tags_of(conn, [run_id]).get(run_id, []))
            new = [{"run_id": run_id, "tag": t} for t in wanted if t not in have]
            if new:
                conn.execute(run_tags.insert(), new)

    def remove_tags(self, run_id: str, tags: Iterable[str]) -> None:
        """Take ``tags`` off the run (exact id); tags it does not have are ignored."""
        wanted = check_tags(tags)
        with self._db.write() as conn:
            self._require(conn, run_id)
            conn.execute(
                run_tags.delete().where(run_tags.c.run_id == run_id, run_tags.c.tag.in_(wanted))
            )

    def rename(self, run_id: str, name: str | None) -> None:
        """Give the run (exact id) a new name (``None``: no name)."""
        with self._db.write() as conn:
            self._require(conn, run_id)
            conn.execute(runs.update().where(runs.c.id == run_id).values(name=name))

    def move_tag(self, tag: str, run_id: str, *, name: str | None = None) -> None:
        """Make ``run_id`` the one run carrying ``tag`` (among the runs named ``name``,
        when given): a pointer such as ``baseline=main``, moved in one transaction."""
        (tag,) = check_tags([tag])
        with self._db.write() as conn:
            self._require(conn, run_id)
            holders = sa.select(runs.c.id)
            if name is not None:
                holders = holders.where(runs.c.name == name)
            conn.execute(
                run_tags.delete().where(run_tags.c.tag == tag, run_tags.c.run_id.in_(holders))
            )
            conn.execute(run_tags.insert().values(run_id=run_id, tag=tag))

    @staticmethod
    def _tags_of(conn: Connection, run_ids: builtins.list[str]) -> dict[str, builtins.list[str]]:
        """Each run's tags in alphabetical order (runs without tags are left out)."""
        found: dict[str, builtins.list[str]] = {}
        for chunk in chunked(run_ids, RunRepository.CHUNK):
            query = (
                sa.select(run_tags.c.run_id, run_tags.c.tag)
                .where(run_tags.c.run_id.in_(chunk))
                .order_by(run_tags.c.run_id, run_tags.c.tag)
            )
            for rid, tag in conn.execute(query):
                found.setdefault(rid, []).append(tag)
        return found

    def mark_started(self, run_id: str) -> None:
        """Status ``running``; the first start time is kept when a run is resumed."""
        self._update(
            run_id,
            status="running",
            started_at=sa.func.coalesce(runs.c.started_at, now()),
            completed_at=None,
        )

    def finish(self, run_id: str, status: RunStatus, summary: RunSummary | None) -> None:
        self._update(
            run_id,
            status=status,
            summary=None if summary is None else summary.model_dump(mode="json"),
            completed_at=now(),
            lease_owner=None,
            lease_expires_at=None,
        )

    # ------------------------------------------------------------------ leases
    def acquire_lease(self, run_id: str, owner: str, *, lease_s: float = LEASE_S) -> None:
        """Take the run for ``owner`` (atomically) or raise ``RunLeasedError`` naming the
        process that holds it. A lease that expired, or whose owner is a dead process of
        this host (``kill -9``), is taken over."""
        with self._db.write() as conn:
            row = conn.execute(
                sa.select(runs.c.id, runs.c.lease_owner, runs.c.lease_expires_at).where(
                    runs.c.id == run_id
                )
            ).first()
            if row is None:
                raise RunNotFoundError(run_id)
            held_by, expires = row.lease_owner, row.lease_expires_at
            if held_by not in (None, owner) and lease_is_live(held_by, expires):
                raise RunLeasedError(run_id, held_by, expires)
            current = (
                runs.c.lease_owner.is_(None) if held_by is None else runs.c.lease_owner == held_by
            )
            taken = conn.execute(
                runs.update()
                .where(runs.c.id == run_id, current)
                .values(lease_owner=owner, lease_expires_at=now() + lease_s)
            ).rowcount
            if taken != 1:  # another process took it between our read and write
                raise RunLeasedError(run_id, "another process", None)

    def renew_lease(self, run_id: str, owner: str, *, lease_s: float = LEASE_S) -> bool:
        """Extend ``owner``'s lease; ``False`` when it no longer holds the run."""
        with self._db.write() as conn:
            return bool(
                conn.execute(
                    runs.update()
                    .where(runs.c.id == run_id, runs.c.lease_owner == owner)
                    .values(lease_expires_at=now() + lease_s)
                ).rowcount
            )

    def release_lease(self, run_id: str, owner: str) -> None:
        """Give the run up (a no-op when ``owner`` does not hold it)."""
        with self._db.write() as conn:
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id, runs.c.lease_owner == owner)
                .values(lease_owner=None, lease_expires_at=None)
            )

    def delete(self, run_id: str) -> None:
        """Delete a run (exact id) with its items, results, scores and judge calls."""
        with self._db.write() as conn:
            if conn.execute(runs.delete().where(runs.c.id == run_id)).rowcount == 0:
                raise RunNotFoundError(run_id)

    # ------------------------------------------------------------------ results
    def write_results(
        self, run_id: str, results: Sequence[ItemResult] | Sequence[EncodedResult]
    ) -> None:
        """Store results with their scores and judge calls in one transaction (three
        ``executemany`` inserts plus the run's counters). A result whose (item, repeat) the
        run already has raises ``DuplicateResultError`` and nothing of the batch is stored.
        ``results`` may come encoded already (``result_inserts.encode_result``): what the
        store writer commits."""
        if not results:
            return
        encoded = encode_results(run_id, results)
        try:
            with self._db.write() as conn:
                insert_encoded(conn, run_id, encoded)
        except IntegrityError as exc:
            duplicates = self._duplicate_keys(run_id, [result_key(e) for e in encoded])
            if duplicates:
                raise DuplicateResultError(run_id, duplicates) from exc
            raise

    def completed_keys(self, run_id: str) -> set[tuple[str, int]]:
        """The (item_id, repeat) pairs the run has results for: what resume skips."""
        t = item_results.c
        with self._db.read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(sa.select(t.item_id, t.repeat).where(t.run_id == run_id))
            return {(item_id, repeat) for item_id, repeat in rows}

    def completed_count(self, run_id: str) -> int:
        """How many (item, repeat) results the run has."""
        with self._db.read() as conn:
            self._require(conn, run_id)
            query = sa.select(sa.func.count()).where(item_results.c.run_id == run_id)
            return int(conn.execute(query).scalar_one())

    def completed_units(self, run_id: str) -> Iterator[tuple[int, int, str]]:
        """(position, repeat, item id) of every stored result in (position, repeat) order,
        streamed in pages of short read transactions: what a resume skips, without holding
        every key (``completed_keys``) in memory."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return self._stream_units(run_id)

    def results(
        self, run_id: str, *, offset: int = 0, limit: int | None = None, trusted: bool = False
    ) -> Iterator[ItemResult]:
        """Results in (position, repeat) order, streamed in chunks (three queries each).
        ``trusted``: not validated again (``results_codec.build_results``), for a caller
        that only writes them out (an export)."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return self._stream_results(run_id, offset, limit, trusted)

    def score_rows(self, run_id: str) -> Iterator[ScoreRow]:
        """Every score of the run, flat, in (position, repeat, scorer) order, streamed."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return self._stream_score_rows(run_id)

    def corpus_rows(self, run_id: str, scorer_id: str) -> Iterator[tuple[int, int, Any]]:
        """(position, repeat, payload) of every corpus payload ``scorer_id`` stored in the
        run, in (position, repeat) order, streamed: the input of a corpus aggregation
        (``assay.summary.stats.corpus_value``) recomputed from the store."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return self._stream_corpus_rows(run_id, scorer_id)

    def summary_source(self, run_id: str) -> StoredSummarySource:
        """The run's stored rows as the source of its summary (``assay.summary.source``):
        ``SummaryAccumulator.summary(source=...)`` streams them back scorer by scorer."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return StoredSummarySource(self._db, run_id, self.corpus_rows)

    def inline_items(self, run_id: str) -> Iterator[Item]:
        """The run's own items (empty for a dataset run) in their original order."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return self._stream_inline_items(run_id)

    # ------------------------------------------------------------------ helpers
    def _resolve(self, conn: Connection, ref: str) -> str:
        if not ref:
            raise RunNotFoundError(ref)
        if conn.execute(sa.select(runs.c.id).where(runs.c.id == ref)).first() is not None:
            return ref
        matches = (
            conn.execute(
                sa.select(runs.c.id)
                .where(runs.c.id.like(_escape_like(ref) + "%", escape="\\"))
                .order_by(runs.c.id)
                .limit(6)
            )
            .scalars()
            .all()
        )
        if not matches:
            raise RunNotFoundError(ref)
        if len(matches) > 1:
            raise AmbiguousRunIdError(ref, matches)
        return str(matches[0])

    @staticmethod
    def _require(conn: Connection, run_id: str) -> None:
        if conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise RunNotFoundError(run_id)

    def _update(self, run_id: str, **values: Any) -> None:
        with self._db.write() as conn:
            result = conn.execute(
                runs.update().where(runs.c.id == run_id).values(updated_at=now(), **values)
            )
            if result.rowcount == 0:
                raise RunNotFoundError(run_id)

    def _insert_items(
        self, conn: Connection, run_id: str, items: Iterable[Item | Mapping[str, Any]]
    ) -> int:
        position = 0
        sql = insert_sql(run_items, RUN_ITEM_COLUMNS, conn.dialect.name, conn.dialect.paramstyle)
        for chunk in chunked(items, self.CHUNK):
            batch = [as_item(value) for value in chunk]
            ids = [item.id for item in batch]
            seen: set[str] = set()
            for item_id in ids:
                if item_id in seen:
                    raise DuplicateItemError(f"run {run_id!r}", item_id, "item ids must be unique")
                seen.add(item_id)
            rows = []
            for item in batch:
                rows.append(run_item_row(run_id, position, item))
                position += 1
            if position > len(rows):  # an earlier chunk is stored: may it hold one of these?
                earlier = conn.exec_driver_sql(
                    _earlier_item_sql(len(rows), conn.dialect.paramstyle),
                    (run_id, *(row[2] for row in rows)),  # the ids as stored (NUL escaped)
                ).first()
                if earlier is not None:
                    raise DuplicateItemError(
                        f"run {run_id!r}", unescape_nul(earlier[0]), "item ids must be unique"
                    )
            conn.exec_driver_sql(sql, rows)
        return position

    def _duplicate_keys(
        self, run_id: str, batch_keys: Sequence[tuple[str, int]]
    ) -> builtins.list[tuple[str, int]]:
        """Which keys of a refused batch were duplicates (repeated in it, or stored)."""
        keys = Counter(batch_keys)
        duplicates = {key for key, count in keys.items() if count > 1}
        t = item_results.c
        with self._db.read() as conn:
            for chunk in chunked(sorted({item_id for item_id, _ in keys}), self.CHUNK):
                rows = conn.execute(
                    sa.select(t.item_id, t.repeat).where(t.run_id == run_id, t.item_id.in_(chunk))
                )
                duplicates.update(
                    (item_id, repeat) for item_id, repeat in rows if (item_id, repeat) in keys
                )
        return sorted(duplicates)

    def _stream_results(
        self, run_id: str, offset: int, limit: int | None, trusted: bool = False
    ) -> Iterator[ItemResult]:
        t = item_results.c
        remaining = limit
        after: tuple[int, int, str] | None = None
        while remaining is None or remaining > 0:
            size = self.CHUNK if remaining is None else min(self.CHUNK, remaining)
            query = sa.select(item_results).where(t.run_id == run_id).order_by(*_RESULT_ORDER)
            if after is None:
                query = query.offset(offset)
            else:
                query = query.where(sa.tuple_(*_RESULT_ORDER) > sa.tuple_(*after))
            with self._db.read() as conn:
                rows = conn.execute(query.limit(size)).all()
                result_ids = [row.id for row in rows]
                score_list: builtins.list[Row[Any]] = []
                for ids in chunked(result_ids, self.CHUNK):
                    score_list.extend(
                        conn.execute(
                            # a result's scores in scorer id order, on every backend (an
                            # export's fast path writes them so: ``store.result_export``)
                            sa.select(scores)
                            .where(scores.c.result_id.in_(ids))
                            .order_by(scores.c.result_id, scores.c.scorer_id)
                        ).all()
                    )
                call_list: builtins.list[Row[Any]] = []
                for ids in chunked([row.id for row in score_list], self.CHUNK):
                    call_list.extend(
                        conn.execute(
                            sa.select(judge_calls).where(judge_calls.c.score_id.in_(ids))
                        ).all()
                    )
            yield from build_results(rows, score_list, call_list, trusted=trusted)
            if len(rows) < size:
                return
            last = rows[-1]
            after = (last.position, last.repeat, last.item_id)
            if remaining is not None:
                remaining -= len(rows)

    def _stream_units(self, run_id: str) -> Iterator[tuple[int, int, str]]:
        t = item_results.c
        after: tuple[int, int, str] | None = None
        size = self.CHUNK * 8
        while True:
            query = (
                sa.select(*_RESULT_ORDER)
                .where(t.run_id == run_id)
                .order_by(*_RESULT_ORDER)
                .limit(size)
            )
            if after is not None:
                query = query.where(sa.tuple_(*_RESULT_ORDER) > sa.tuple_(*after))
            with self._db.read() as conn:
                page = [(int(p), int(r), str(i)) for p, r, i in conn.execute(query)]
            yield from page
            if len(page) < size:
                return
            after = page[-1]

    def _stream_score_rows(self, run_id: str) -> Iterator[ScoreRow]:
        t = item_results.c
        order = (*_RESULT_ORDER, scores.c.scorer_id)
        size = self.CHUNK * 10
        after: tuple[int, int, str, str] | None = None
        while True:
            query = (
                sa.select(
                    t.item_id,
                    t.position,
                    t.repeat,
                    scores.c.scorer_id,
                    scores.c.status,
                    scores.c.score,
                    scores.c.values_,
                )
                .select_from(item_results.join(scores, scores.c.result_id == t.id))
                .where(t.run_id == run_id)
                .order_by(*order)
                .limit(size)
            )
            if after is not None:
                query = query.where(sa.tuple_(*order) > sa.tuple_(*after))
            with self._db.read() as conn:
                rows = conn.execute(query).all()
            for row in rows:
                yield ScoreRow(
                    row.item_id,
                    row.position,
                    row.repeat,
                    row.scorer_id,
                    row.status,
                    row.score,
                    row.values_ or None,
                )
            if len(rows) < size:
                return
            last = rows[-1]
            after = (last.position, last.repeat, last.item_id, last.scorer_id)

    def _stream_corpus_rows(self, run_id: str, scorer_id: str) -> Iterator[tuple[int, int, Any]]:
        t = item_results.c
        order = (t.position, t.repeat, t.item_id)
        after: tuple[int, int, str] | None = None
        while True:
            query = (
                sa.select(t.position, t.repeat, t.item_id, scores.c.corpus)
                .select_from(item_results.join(scores, scores.c.result_id == t.id))
                .where(
                    t.run_id == run_id,
                    scores.c.scorer_id == scorer_id,
                    scores.c.corpus.is_not(None),
                )
                .order_by(*order)
                .limit(self.CHUNK)
            )
            if after is not None:
                query = query.where(sa.tuple_(*order) > sa.tuple_(*after))
            with self._db.read() as conn:
                rows = conn.execute(query).all()
            for row in rows:
                yield row.position, row.repeat, row.corpus
            if len(rows) < self.CHUNK:
                return
            last = rows[-1]
            after = (last.position, last.repeat, last.item_id)

    def _stream_inline_items(self, run_id: str) -> Iterator[Item]:
        """The run's items, read as the stored text and decoded here: every stored run
        reads its items back as it goes, and the JSON columns' processors plus a validated
        ``Item`` per row were ≈ 30 µs per item of a 20,000-item run (SQLite), most of it the
        processors. Items are still validated: a store file edited by hand fails here naming
        the field, and validating (≈ 6 µs) costs less than ``model_construct`` (≈ 10 µs). The
        values equal the ``item_from_row`` path's (tests/store/test_result_inserts.py)."""
        t = run_items.c
        as_text = (
            (lambda c: sa.type_coerce(c, sa.Text))
            if self._db.dialect == "sqlite"
            else (lambda c: sa.cast(c, sa.Text))
        )
        query = (
            sa.select(
                t.position,
                sa.type_coerce(t.item_id, sa.String),
                *(as_text(c) for c in (t.input, t.output, t.expected_output, t.context, t.meta)),
            )
            .where(t.run_id == run_id)
            .order_by(t.position)
            .limit(self.CHUNK)
        )
        value, make = json_text_value, Item
        after = -1
        while True:
            with self._db.read() as conn:
                # the driver's tuples, not a ``Row`` each (no column here has a result
                # processor, so the values are the same): a chunk lives while its items
                # run, long enough for the collector to promote tracked ``Row``s to its
                # oldest generation, which then keeps running full collections; a tuple of
                # strings and numbers is untracked the first time the collector sees it
                result = conn.execute(query.where(t.position > after))
                try:
                    rows = result.cursor.fetchall()
                finally:
                    result.close()
            for _, item_id, input_, output, expected, context, meta in rows:
                yield make(
                    id=unescape_nul(item_id),
                    input=value(input_),
                    output=value(output),
                    expected_output=value(expected),
                    context=value(context),
                    metadata=value(meta) or {},
                )
            if len(rows) < self.CHUNK:
                return
            after = rows[-1][0]
