"""A run's results as JSON lines written straight from the rows, as text (issue 25).

Why not ``result_dicts`` + one ``to_json`` per line: on a loaded machine the JSON-lines
export fell under 20,000 rows/s because each line cost a nested dict (a result, its scores,
their judge calls), a pass of the client view over it and its serialisation, all in one
Python thread (about 30,000 lines per CPU second). Here each line is one f-string of the
row's cells, and the scores come joined into the result's rows (one read per chunk instead
of two). A cell is serialised by the rule ``to_json`` applies to its value, so the bytes are
the same as ``result_dicts``' line (tests/store/test_result_lines.py holds the two equal on
hostile values):

- a text is escaped by ``json``'s C encoder, whose escapes are pydantic-core's (checked on
  every code point in the tests);
- a stored JSON text that is a plain string (no escape, no NUL escape) is its own JSON;
  any other stored JSON is parsed and serialised (objects may be spaced or ordered
  otherwise by the database, and old rows by an older encoder);
- a number is its ``repr`` unless that has an exponent or is not finite (pydantic-core
  writes ``1e-7`` where Python writes ``1e-07``), which goes through ``to_json``;
- a lone surrogate (which UTF-8 cannot encode, so the line could not be written) is
  written as its JSON escape ``\\udXXX``, as ``json.dumps`` writes it
  (``codec.escape_lone_surrogates``, ``codec.to_json_text``), on every path.

A result with an error anywhere (its own, a score's, a judge call's) is built as the dict
``result_dicts`` builds and passed through ``view`` first: that is where a client view
changes something (the server's caps and neutralises error texts); other results are
written as stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from pydantic_core import to_json

from assay.store.codec import NUL_ESCAPE, escape_lone_surrogates, to_json_text
from assay.store.db import Database
from assay.store.result_export import (
    _ORDER,
    CHUNK,
    _call_dict,
    _keyset,
    _overlapped,
    _plain,
    _Reader,
    _score_dict,
    _tuples,
    _warnings_fields,
    json_text_value,
    result_dict,
)
from assay.store.tables import item_results, judge_calls, scores

DictView = Callable[[dict[str, Any]], dict[str, Any]]

_text: Callable[[str], str] = json.encoder.encode_basestring
"""A ``str``'s JSON (``json``'s C encoder, ``ensure_ascii=False``: pydantic-core's escapes)."""

# a joined row: the result's 13 cells (``_ITEM``), then its score's 15 (``_SCORE``), NULL
# where the result has none
_ID, _ERROR = 11, 6
_SCORE = 13
_SCORER, _SCORE_ERROR, _SCORE_ID = _SCORE + 1, _SCORE + 11, _SCORE + 14


_PLAIN_LOW, _PLAIN_HIGH = 1e-4, 1e16
"""Numbers ``repr`` writes as pydantic-core does: ``1e-4 <= |x| < 1e16`` (no exponent),
tested inline before ``repr`` (a call of ``_number`` per number was a fifth of a line), and
zero (``not x``: ``0.0`` and ``-0.0`` are written as ``repr`` writes them; not NaN)."""


def _number(value: float | int | None) -> str:
    if value is None:
        return "null"
    text = repr(value)
    if "e" in text or "n" in text:  # 1e-07, inf, nan: pydantic-core spells them otherwise
        return to_json(value).decode()
    return text


def _cell(text: str | None) -> str:
    """A stored JSON text's JSON as ``to_json`` writes its value (``json_text_value``)."""
    if text is None:
        return "null"
    if (
        text[0] == '"'
        and "\\" not in text
        and NUL_ESCAPE not in text
        and len(text) >= 2
        and text[-1] == '"'
        and '"' not in text[1:-1]
    ):
        return text
    return to_json_text(json_text_value(text))


def _object(text: str | None) -> str:
    """``values``, ``steps``, ``prompts``: ``{}`` where none (or an empty value) is stored."""
    if text is None or text == "{}":
        return "{}"
    return to_json_text(json_text_value(text) or {})


def _score_text(row: Sequence[Any], calls: dict[str, list[dict[str, Any]]]) -> str:
    """A score's ``"scorer id":{...}`` member of a line's ``scores``."""
    scorer = _text(row[_SCORER])
    found = calls.get(row[_SCORE_ID]) if calls else None
    score, values, corpus, reason, steps, prompts = row[_SCORE + 5 : _SCORE + 11]
    step, duration = row[_SCORE + 12 : _SCORE + 14]
    if score is None:
        score_text = "null"
    elif _PLAIN_LOW <= abs(score) < _PLAIN_HIGH or not score:
        score_text = repr(score)
    else:
        score_text = _number(score)
    plain = _PLAIN_LOW <= abs(duration) < _PLAIN_HIGH or not duration
    duration_text = repr(duration) if plain else _number(duration)
    return (
        f'{scorer}:{{"scorer_id":{scorer},"scorer_label":{_text(row[_SCORE + 2])},'
        f'"call_id":{_text(row[_SCORE + 3])},"status":{_text(row[_SCORE + 4])},'
        f'"score":{score_text},'
        f'"values":{"{}" if values is None else _object(values)},'
        f'"corpus":{"null" if corpus is None else _cell(corpus)},'
        f'"reason":{"null" if reason is None else _text(_plain(reason))},'
        f'"steps":{"{}" if steps is None else _object(steps)},'
        f'"prompts":{"{}" if prompts is None else _object(prompts)},'
        f'"judge_calls":{"[]" if found is None else to_json_text(found)},"error":null,'
        f'"not_scorable_step":{"null" if step is None else _text(step)},'
        f'"duration_ms":{duration_text}}}'
    )


def _line(group: list[Sequence[Any]], calls: dict[str, list[dict[str, Any]]]) -> str:
    """The JSON line of a result without an error anywhere (``group``: its joined rows).
    Cells that are usually none are tested inline: a call per cell was a third of the
    line's time."""
    row = group[0]
    if row[_SCORER] is None:
        found = "{}"
    elif len(group) == 1:
        found = "{" + _score_text(row, calls) + "}"
    else:
        found = "{" + ",".join(_score_text(score, calls) for score in group) + "}"
    item_id, repeat, position, given, output, expected, _, latency, warnings = row[:9]
    started, completed, _, meta = row[9:13]
    if latency is None:
        latency_text = "null"
    elif _PLAIN_LOW <= abs(latency) < _PLAIN_HIGH or not latency:
        latency_text = repr(latency)
    else:
        latency_text = _number(latency)
    if warnings is None:
        start = (
            repr(started)
            if (_PLAIN_LOW <= abs(started) < _PLAIN_HIGH or not started)
            else _number(started)
        )
        end = (
            repr(completed)
            if (_PLAIN_LOW <= abs(completed) < _PLAIN_HIGH or not completed)
            else _number(completed)
        )
        tail = (
            f'"warnings":[],"started_at":{start},"completed_at":{end},'
            '"usage":null,"cost_usd":null,"samples":null'
        )
    else:
        fields = _warnings_fields(json_text_value(warnings), row[9], row[10])
        tail = to_json_text(fields)[1:-1]
    return (
        f'{{"item_id":{_text(_plain(item_id))},"repeat":{repeat},"position":{position},'
        f'"input":{_cell(given)},"output":{_cell(output)},'
        f'"expected_output":{_cell(expected)},"error":null,'
        f'"latency_ms":{latency_text},'
        f'"scores":{found},{tail},"meta":{"null" if meta is None else _cell(meta)}}}'
    )


def _result_dict(group: list[Sequence[Any]], calls: dict[str, list[dict[str, Any]]]) -> Any:
    """The result's dict as ``result_dicts`` builds it (for a view to change)."""
    row = group[0]
    found = (
        {}
        if row[_SCORER] is None
        else {
            score[_SCORER]: _score_dict(tuple(score[_SCORE:]), json_text_value, calls)
            for score in group
        }
    )
    return result_dict(row, found, json_text_value)


def result_lines(
    db: Database, run_id: str, *, view: DictView | None = None, chunk: int = CHUNK
) -> Iterator[list[str]]:
    """Every result of the run as its JSON line (without the newline): the bytes
    ``to_json`` writes for ``result_dicts``' dict of it (after ``view``, which is given
    only the results with an error anywhere), in (position, repeat, item id) order, a
    list of lines per ``chunk`` results.

    Per chunk: the chunk's last key (an index-only read), then the results joined with
    their scores over that key range (read as the driver's tuples), then their judge
    calls. (The database writing the lines itself was measured slower on SQLite: its
    ``||`` and ``json_quote`` cost more per row than the f-string.)"""
    t, s, j = item_results.c, scores.c, judge_calls.c
    read = _Reader(db)
    score_columns = read.score_columns()
    item_columns = read.result_columns()
    if read.raw:
        # SQLite: each result's scores by the (result_id, scorer_id) index, in scorer order
        joined = sa.select(*item_columns, *score_columns).select_from(
            item_results.outerjoin(scores, s.result_id == t.id)
        )
        scorer_order: Any = s.scorer_id
        with_calls = item_results.join(scores, s.result_id == t.id).join(
            judge_calls, j.score_id == s.id
        )
    else:
        # PostgreSQL: an index lookup per result (LATERAL), as ``result_dicts`` reads them
        per_result = (
            sa.select(*score_columns).where(s.result_id == t.id).offset(0).lateral("chunk_scores")
        )
        joined = sa.select(*item_columns, *per_result.c).select_from(
            item_results.outerjoin(per_result, sa.true())
        )
        scorer_order = per_result.c.scorer_id
        with_calls = item_results.join(per_result, sa.true()).join(
            judge_calls, j.score_id == per_result.c.id
        )
    joined = joined.where(t.run_id == run_id).order_by(*_ORDER, scorer_order)
    calls_query = (
        sa.select(judge_calls)
        .select_from(with_calls)
        .where(t.run_id == run_id)
        .order_by(j.score_id, j.seq)
    )
    bound = (
        sa.select(t.position, t.repeat, sa.type_coerce(t.item_id, sa.String))
        .where(t.run_id == run_id)
        .order_by(*_ORDER)
        .offset(chunk - 1)
        .limit(1)
    )

    def reads() -> Generator[tuple[Sequence[Any], Sequence[Any]]]:
        after: tuple[int, int, str] | None = None
        while True:
            with db.read() as conn:
                end = conn.execute(_keyset(bound, after, None)).first()
                last = None if end is None else (end[0], end[1], end[2])
                rows = _tuples(conn.execute(_keyset(joined, after, last)))
                call_rows = conn.execute(_keyset(calls_query, after, last)).all()
            yield rows, call_rows
            if last is None:
                return
            after = last

    result_of = itemgetter(_ID)
    for rows, call_rows in _overlapped(db, reads()):
        calls: dict[str, list[dict[str, Any]]] = {}
        failed: set[str] = set()
        for call in call_rows:
            calls.setdefault(call.score_id, []).append(_call_dict(call))
            if call.error:
                failed.add(call.score_id)
        lines: list[str] = []
        add = lines.append
        for _, grouped in groupby(rows, result_of):
            group = list(grouped)
            row = group[0]
            if len(group) == 1:
                plain = row[_ERROR] is None and row[_SCORE_ERROR] is None
                if plain and failed and row[_SCORE_ID] in failed:
                    plain = False
            else:
                plain = (
                    row[_ERROR] is None
                    and all(score[_SCORE_ERROR] is None for score in group)
                    and not (failed and any(score[_SCORE_ID] in failed for score in group))
                )
            if plain:
                add(escape_lone_surrogates(_line(group, calls)))
            else:
                result = _result_dict(group, calls)
                add(to_json_text(result if view is None else view(result)))
        if lines:
            yield lines
