"""``store.result_lines``: JSON lines written as text from the rows must be the bytes
``to_json`` writes for ``result_dicts``' dicts (and so ``model_dump_json``'s), on hostile
values: every code point, numbers around the points where Python and pydantic-core spell
them differently, stored JSON of every shape, NUL escapes, several scorers, judge calls,
chunk boundaries; on SQLite and PostgreSQL."""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import to_json

from assay.store import Store
from assay.store.codec import NUL_ESCAPE
from assay.store.result_lines import _number, _text
from assay.types import (
    ItemResult,
    JudgeCall,
    RunInfo,
    ScoreError,
    ScoreResult,
    ScorerSpec,
    TargetError,
    TargetSpec,
    Usage,
)

EVERY_CODE_POINT = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)

NUMBERS = [
    0.0,
    -0.0,
    1e-4,
    math.nextafter(1e-4, 0),
    -1e-4,
    1e16,
    math.nextafter(1e16, 0),
    -math.nextafter(1e16, 0),
    1e-5,
    1e-7,
    5e-324,
    1.7976931348623157e308,
    1e22,
    123.456,
    0.1 + 0.2,
    323.060780138377,
    1_700_000_000.123456,
]

TEXTS = [
    "plain",
    'quote " and back\\slash',
    "".join(chr(c) for c in range(0x20)) + "\x7f",
    "nul \x00 and \uf8ff private" + NUL_ESCAPE,
    "ünïcödé ✓ 中文 \U0001f600 \u2028\u2029",
    "",
    "1e5",
]

VALUES: list[Any] = [
    *TEXTS,
    {"a": 1e-7, "b": [1e16, 2.5, None, True], "c": {"d": "x\ny"}},
    [1, 2**70, -(2**65), 0.1],
    1e-7,
    12,
    True,
    None,
    {},
    [],
]


def test_text_escapes_every_code_point_as_pydantic_core() -> None:
    for start in range(0, len(EVERY_CODE_POINT), 4096):
        piece = EVERY_CODE_POINT[start : start + 4096]
        assert _text(piece) == to_json(piece).decode()


def test_numbers_are_spelled_as_pydantic_core() -> None:
    for value in [*NUMBERS, math.inf, -math.inf, math.nan, 2**70, -3]:
        for number in (value, -value):
            assert _number(number) == to_json(number).decode(), number


def _result(i: int) -> ItemResult:
    text = TEXTS[i % len(TEXTS)]
    value = VALUES[i % len(VALUES)]
    number = NUMBERS[i % len(NUMBERS)]
    scores: dict[str, ScoreResult] = {}
    if i % 6 != 5:  # some results have no score at all
        scores["b-second"] = ScoreResult(
            scorer_id="b-second",
            scorer_label=f'Second "{i}\\\t ✓',  # a plain column: no NUL, no surrogate
            call_id=f"c{i}",
            status="ready",
            score=min(abs(number), 1.0),
            reason=None if i % 3 == 0 else f"because {text}",
            values={} if i % 2 else {"precision": number, "recall": 1e-7},
            corpus=None if i % 5 else value,
            steps={} if i % 7 else {"extract": {"claims": [text]}},
            duration_ms=abs(number),
        )
    if i % 3 == 1:  # a second scorer, sorted first: the line keeps scorer id order
        failing = i % 9 == 7
        scores["a-first"] = ScoreResult(
            scorer_id="a-first",
            scorer_label="First",
            call_id=f"d{i}",
            status="error" if failing else "ready",
            score=None if failing else 0.5,
            error=ScoreError(message=f"judge down {text}") if failing else None,
            judge_calls=[
                JudgeCall(
                    step="score",
                    status="failed" if i % 2 else "success",
                    prompt=f"p {text}",
                    model_id="m",
                    output={"score": number},
                    error=f"HTTP 500 {text}" if i % 2 else None,
                    usage=Usage(input_tokens=3, output_tokens=1),
                    duration_ms=number,
                )
            ]
            if i % 4 == 1
            else [],
        )
    return ItemResult(
        item_id=f"{text}#{i}",
        repeat=i % 2,
        position=i // 2,
        input=value,
        output=VALUES[(i + 3) % len(VALUES)],
        expected_output=None if i % 5 == 0 else text,
        error=TargetError(message=f"boom {text}", traceback="tb") if i % 11 == 10 else None,
        latency_ms=None if i % 8 == 0 else number,
        scores=scores,
        warnings=[text] if i % 10 == 3 else [],
        usage=Usage(input_tokens=5, output_tokens=2) if i % 4 == 2 else None,
        cost_usd=0.001 if i % 4 == 2 else None,
        started_at=number,
        completed_at=NUMBERS[(i + 1) % len(NUMBERS)],
        meta=None if i % 3 else {"tag": text, "n": number},
    )


def _write(store: Store, count: int) -> list[ItemResult]:
    results = [_result(i) for i in range(count)]
    store.runs.create(
        RunInfo(
            id="run",
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=[
                ScorerSpec(id="a-first", label="First"),
                ScorerSpec(id="b-second", label="Second"),
            ],
            repeats=2,
        )
    )
    store.runs.write_results("run", results)
    return results


def _lines(store: Store, **kwargs: Any) -> list[str]:
    from assay.store.result_lines import result_lines

    db = store.run_queries._db
    return [line for chunk in result_lines(db, "run", **kwargs) for line in chunk]


def test_lines_are_the_dicts_serialised_on_hostile_values(store: Store) -> None:
    _write(store, 160)
    expected = [to_json(d).decode() for d in store.run_queries.export_dicts("run")]
    assert len(expected) == 160
    assert _lines(store) == expected
    # and what whole, validated results write (on PostgreSQL too: its ``json`` keeps 1e22
    # in ``values`` a float, where ``jsonb`` made it an integer; migration 0014)
    assert expected == [r.model_dump_json() for r in store.runs.results("run")]


def test_chunks_cut_between_results_never_inside_one(store: Store) -> None:
    """Results of two scorers are two joined rows: a chunk of 3 results must still carry
    every score of its results (the chunk is bounded by result keys, not rows)."""
    from assay.store.result_export import export_rows, result_dicts

    _write(store, 40)  # item ids with NUL: a chunk's end key is compared as stored
    db = store.run_queries._db
    whole = _lines(store)
    rows = list(export_rows(db, "run", ["a-first", "b-second"]))
    for chunk in (1, 2, 3, 7, 39, 40, 41):
        assert _lines(store, chunk=chunk) == whole
        # the dict and CSV paths page the same way (they looped on such an id for ever)
        assert [to_json(d).decode() for d in result_dicts(db, "run", chunk=chunk)] == whole
        assert list(export_rows(db, "run", ["a-first", "b-second"], chunk=chunk)) == rows


def test_view_sees_only_the_results_with_an_error_and_its_change_is_written(
    store: Store,
) -> None:
    _write(store, 60)
    seen: list[dict[str, Any]] = []

    def view(result: dict[str, Any]) -> dict[str, Any]:
        seen.append(result)
        return {**result, "item_id": "VIEWED"}

    lines = _lines(store, view=view)
    with_error = [
        d
        for d in store.run_queries.export_dicts("run")
        if d["error"] is not None
        or any(
            s["error"] is not None or any(c["error"] for c in s["judge_calls"])
            for s in d["scores"].values()
        )
    ]
    assert with_error and len(with_error) < 60
    assert seen == with_error
    assert sum('"item_id":"VIEWED"' in line for line in lines) == len(with_error)


def test_an_empty_run_has_no_lines(store: Store) -> None:
    _write(store, 0)
    assert _lines(store) == []
