"""Browse a stored run's results: filtered, paginated pages and one item's repeats.

The API's ``GET /api/runs/{id}/items`` and a Python user get the same page from
``run_items_page``; the filtering and paging happen in SQL (``store.run_queries``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from assay.datasets.formats.csv import text_cell
from assay.store import Store, open_store, using_store
from assay.store.codec import escape_lone_surrogates, to_json_text
from assay.store.result_export import FlatRow
from assay.store.run_queries import ResultFilter
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
        total, items = db.run_queries.counted_page(
            info.id, query, offset=offset, limit=limit, single_repeat=info.repeats == 1
        )
        return RunItemsPage(run_id=info.id, total=total, offset=offset, limit=limit, items=items)


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
    json_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[str, Iterator[str]]:
    """(run id, text) of the run's results, streamed as pieces of whole lines (joined,
    they are the export): ``jsonl`` is one ``ItemResult`` per line; ``csv`` one row per
    result (input, output, expected output, error) with each scorer's status and score,
    texts written like the dataset CSV (formula-like cells neutralised, ``""`` kept apart
    from a missing value: ``datasets.formats.csv``). A lone surrogate, which UTF-8 cannot
    carry, is written as its JSON escape ``\\udXXX`` in both formats: exact in JSON (and
    in a CSV cell holding JSON), six plain characters in a CSV text cell, which has no
    other way to hold it. The run is looked up now (so a bad id fails before anything is
    sent); the rows are read lazily. ``view`` changes each result first (the server's:
    errors capped, no tracebacks).

    Both formats read straight from the rows (``store.result_export``), with no
    ``ItemResult`` per row: building and validating them held a 100,000-row export to a
    few thousand rows/s (issue 25). So a caller with a ``view`` says what it does in the
    terms of each fast path: ``error_text`` (the only thing of ``view`` a CSV row shows
    is the error message) and ``json_view`` (the same change on the result's JSON dict,
    given only the results with an error anywhere: the others are written as stored);
    a ``view`` without them reads whole results (slower, the same text)."""
    db = store if store is not None else open_store()
    record = db.runs.get(run_id)
    run = record.info.id
    scorer_ids = [spec.id for spec in record.info.scorers]
    if fmt == "csv" and (view is None or error_text is not None):
        rows = db.run_queries.export_rows(run, scorer_ids)
        if error_text is not None:
            change = error_text
            rows = (row if row[3] is None else (*row[:3], change(row[3]), *row[4:]) for row in rows)
        return run, _csv_lines(rows, scorer_ids)
    if fmt == "jsonl" and (view is None or json_view is not None):
        return run, _jsonl_pieces(db.run_queries.export_lines(run, json_view))
    results = db.runs.results(run, trusted=True)
    if view is not None:
        results = map(view, results)
    if fmt == "jsonl":
        return run, (_json_line(result) + "\n" for result in results)
    return run, _csv_lines((_export_row(r, scorer_ids) for r in results), scorer_ids)


def _json_line(result: ItemResult) -> str:
    """``model_dump_json``'s line; a result holding a lone surrogate (which it refuses)
    written with the surrogate escaped, as the fast path writes it (``codec.to_json_text``)."""
    try:
        return result.model_dump_json()
    except PydanticSerializationError:
        return to_json_text(result.model_dump())


PIECE = 1000
"""Lines per piece of text an export yields: one ``writerows`` or join per piece."""


def _jsonl_pieces(chunks: Iterator[list[str]]) -> Iterator[str]:
    """The chunks' JSON lines, ``PIECE`` a piece (``store.result_lines``: each line what
    ``model_dump_json`` writes for the result)."""
    for lines in chunks:
        for start in range(0, len(lines), PIECE):
            yield "\n".join(lines[start : start + PIECE]) + "\n"


def _export_row(result: ItemResult, scorer_ids: list[str]) -> FlatRow:
    """The cells of ``result`` that a CSV row shows (``store.result_export.FlatRow``)."""
    row: list[Any] = [
        result.item_id,
        result.repeat,
        result.position,
        None if result.error is None else result.error.message,
        result.latency_ms,
        result.input,
        result.output,
        result.expected_output,
    ]
    for scorer in scorer_ids:
        score = result.scores.get(scorer)
        row += (None, None) if score is None else (score.status, score.score)
    return tuple(row)


def _csv_lines(rows: Iterable[FlatRow], scorer_ids: list[str]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        # a lone surrogate as its JSON escape: UTF-8 cannot write it (codec)
        return escape_lone_surrogates(text)

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
    piece: list[list[Any]] = []
    for result in rows:
        error, latency = result[3], result[4]
        row = [
            text_cell(result[0]),
            result[1],
            result[2],
            "" if error is None else text_cell(error),
            "" if latency is None else latency,
            _text(result[5]),
            _text(result[6]),
            _text(result[7]),
        ]
        # (status, score) of each scorer: empty where the result has none
        row += ["" if cell is None else cell for cell in result[8:]]
        piece.append(row)
        if len(piece) == PIECE:
            writer.writerows(piece)
            piece = []
            yield flush()
    if piece:
        writer.writerows(piece)
        yield flush()


def _text(value: object) -> str:
    """A value's cell as the dataset CSV writes it (``datasets.formats.csv``): ``None`` is
    empty, ``""`` is ``""``, non-strings are JSON, formula-like texts are neutralised; so the
    export imports back as a dataset (``id=item_id``) with the same values."""
    if value is None:
        return ""
    return text_cell(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
