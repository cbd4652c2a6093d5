"""Browse a stored run's results: filtered, paginated pages and one item's repeats.

The API's ``GET /api/runs/{id}/items`` and a Python user get the same page from
``run_items_page``; the filtering and paging happen in SQL (``store.run_queries``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.datasets.formats.csv import text_cell
from assay.store import Store, open_store, using_store
from assay.store.run_queries import ExportRow, ResultFilter
from assay.types import ItemResult

MAX_PAGE = 500

ScoreStatusFilter = Literal["ready", "error", "not_scorable", "skipped"]


class RunItemFilter(BaseModel):
    """Which results to show (see ``store.run_queries.ResultFilter``); scores are on the
    scorer's own scale."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorer: str | None = Field(default=None, max_length=255)
    min_score: float | None = Field(default=None, allow_inf_nan=False)
    max_score: float | None = Field(default=None, allow_inf_nan=False)
    status: ScoreStatusFilter | None = None
    errors_only: bool = False
    q: str | None = Field(default=None, max_length=500)


class RunItemsPage(BaseModel):
    """One page of results: ``total`` counts every result passing the filter."""

    run_id: str
    total: int
    offset: int
    limit: int
    items: list[ItemResult]


def run_items_page(
    run_id: str,
    wanted: RunItemFilter | None = None,
    *,
    offset: int = 0,
    limit: int = 50,
    store: Store | None = None,
) -> RunItemsPage:
    """Results of run ``run_id`` (an id or unique prefix) passing ``wanted``, in (position,
    repeat) order: ``limit`` (at most ``MAX_PAGE``) from ``offset``."""
    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"offset must be >= 0 and limit 1..{MAX_PAGE}")
    wanted = wanted or RunItemFilter()
    query = ResultFilter(**wanted.model_dump())
    with using_store(store) as db:
        info = db.runs.get(run_id).info
        run = info.id
        return RunItemsPage(
            run_id=run,
            total=db.run_queries.count(run, query, single_repeat=info.repeats == 1),
            offset=offset,
            limit=limit,
            items=db.run_queries.page(
                run, query, offset=offset, limit=limit, single_repeat=info.repeats == 1
            ),
        )


def run_item(run_id: str, item_id: str, *, store: Store | None = None) -> list[ItemResult]:
    """Every repeat of one item of the run; ``LookupError`` when the run lacks it."""
    from assay.store.annotations_repo import ItemNotInRunError

    with using_store(store) as db:
        run = db.runs.get(run_id).info.id
        results = db.run_queries.item(run, item_id)
    if not results:
        raise ItemNotInRunError(run, item_id)
    return results


ExportFormat = Literal["jsonl", "csv"]


def export_lines(
    run_id: str,
    fmt: ExportFormat,
    *,
    store: Store | None = None,
    view: Callable[[ItemResult], ItemResult] | None = None,
    error_text: Callable[[str], str | None] | None = None,
) -> tuple[str, Iterator[str]]:
    """(run id, lines) of the run's results, streamed: ``jsonl`` is one ``ItemResult``
    per line; ``csv`` one row per result (input, output, expected output, error) with each
    scorer's status and score, texts written like the dataset CSV (formula-like cells
    neutralised, ``""`` kept apart from a missing value: ``datasets.formats.csv``). The run is
    looked up now (so a bad id fails before anything is sent); lines are read lazily.
    ``view`` changes each result first (the server's: errors capped, no tracebacks).

    CSV reads its cells straight from the rows (``RunQueries.export_rows``): no
    ``ItemResult`` per row, which held a 100,000-row export to ~10k rows/s. The only
    thing of ``view`` a CSV row shows is the error message, so a caller with a ``view``
    passes what it does to a message as ``error_text``; a ``view`` without it reads
    whole results (slower, same cells). JSON lines are whole results, built from the
    store's rows without re-validating them (``RunRepository.results(trusted=True)``)."""
    db = store if store is not None else open_store()
    record = db.runs.get(run_id)
    scorer_ids = [spec.id for spec in record.info.scorers]
    if fmt == "csv" and (view is None or error_text is not None):
        rows = db.run_queries.export_rows(record.info.id)
        if error_text is not None:
            rows = (
                row._replace(error_message=_or_none(error_text, row.error_message)) for row in rows
            )
        return record.info.id, _csv_lines(rows, scorer_ids)
    results = db.runs.results(record.info.id, trusted=True)
    if view is not None:
        results = map(view, results)
    if fmt == "jsonl":
        return record.info.id, (result.model_dump_json() + "\n" for result in results)
    return record.info.id, _csv_lines(map(_export_row, results), scorer_ids)


def _or_none(change: Callable[[str], str | None], text: str | None) -> str | None:
    return None if text is None else change(text)


def _export_row(result: ItemResult) -> ExportRow:
    """The cells of ``result`` that a CSV row shows."""
    return ExportRow(
        result.item_id,
        result.repeat,
        result.position,
        None if result.error is None else result.error.message,
        result.latency_ms,
        result.input,
        result.output,
        result.expected_output,
        {key: (score.status, score.score) for key, score in result.scores.items()},
    )


def _csv_lines(rows: Iterator[ExportRow], scorer_ids: list[str]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    header = [
        "item_id",
        "repeat",
        "position",
        "error",
        "latency_ms",
        "input",
        "output",
        "expected_output",
    ]
    for scorer in scorer_ids:
        header += [f"{scorer}.status", f"{scorer}.score"]
    writer.writerow(header)
    yield flush()
    for result in rows:
        row: list[object] = [
            text_cell(result.item_id),
            result.repeat,
            result.position,
            "" if result.error_message is None else text_cell(result.error_message),
            "" if result.latency_ms is None else result.latency_ms,
            _text(result.input),
            _text(result.output),
            _text(result.expected_output),
        ]
        for scorer in scorer_ids:
            score = result.scores.get(scorer)
            row += ["", ""] if score is None else [score[0], "" if score[1] is None else score[1]]
        writer.writerow(row)
        yield flush()


def _text(value: object) -> str:
    """A value's cell as the dataset CSV writes it (``datasets.formats.csv``): ``None`` is
    empty, ``""`` is ``""``, non-strings are JSON, formula-like texts are neutralised; so the
    export imports back as a dataset (``id=item_id``) with the same values."""
    if value is None:
        return ""
    return text_cell(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
