"""A lone surrogate (``"\\ud800"``: a Python string may hold one, the store keeps it) in a
result is exported as valid UTF-8 on every path: JSON lines with the escape ``\\ud800``
as ``json.dumps`` writes it (``json.loads`` gives the same result back), CSV cells with
the same escape. The fast lines, the lines of a client view and the lines of whole results
are the same text. On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from assay.operations.run_items import export_lines
from assay.store import Store
from assay.store.codec import escape_lone_surrogates, to_json_text
from assay.types import ItemResult, JudgeCall, ScoreResult, TargetError
from tests.store.test_json_exact import run_info

LONE = "\ud800"
LOW = "\udfff"


def results() -> list[ItemResult]:
    """A result with a lone surrogate in every text a result has (item id, input, output
    keys and values, expected output, a score's reason, values, steps, a judge call's
    prompt, output and raw output), one with one in its error, one without any."""
    call = JudgeCall(
        step="score",
        status="success",
        prompt=f"p{LONE}",
        model_id="m",
        output={f"k{LOW}": f"v{LONE}"},
        raw_output=f"raw{LONE}",
    )
    score = ScoreResult(
        scorer_id="s",
        scorer_label="S",
        call_id="c",
        status="ready",
        score=1.0,
        reason=f"because{LONE}",
        values={f"v{LONE}": 0.5},
        steps={"score": [f"x{LOW}"]},
        judge_calls=[call],
    )
    common = {"started_at": 1.0, "completed_at": 2.0}
    return [
        ItemResult(
            item_id=f"id{LONE}",
            position=0,
            input=f"in{LOW}",
            output={f"key{LONE}": [f"val{LOW}", 1e-07]},
            expected_output=f"{LONE}",
            scores={"s": score},
            **common,
        ),
        ItemResult(
            item_id="failed",
            position=1,
            input="q",
            error=TargetError(message=f"boom{LONE}", kind="ValueError"),
            **common,
        ),
        ItemResult(item_id="plain", position=2, input="q", output="a", **common),
    ]


def stored(store: Store) -> str:
    store.runs.create(run_info("lone"))
    store.runs.write_results("lone", results())
    return "lone"


def text_of(pieces: Any) -> str:
    text = "".join(pieces)
    text.encode("utf-8")  # strict: a lone surrogate would raise here
    return text


def test_json_lines_escape_a_lone_surrogate_and_read_back_the_result(store: Store) -> None:
    run_id = stored(store)
    fast = text_of(export_lines(run_id, "jsonl", store=store)[1])
    whole = text_of(export_lines(run_id, "jsonl", store=store, view=lambda r: r)[1])
    viewed = text_of(
        export_lines(run_id, "jsonl", store=store, view=lambda r: r, json_view=lambda d: d)[1]
    )
    assert fast == whole == viewed
    assert '"item_id":"id\\ud800"' in fast and '"reason":"because\\ud800"' in fast
    sent = [r.model_dump() for r in results()]
    assert [json.loads(line) for line in fast.splitlines()] == sent


def test_csv_cells_escape_a_lone_surrogate(store: Store) -> None:
    run_id = stored(store)
    fast = text_of(export_lines(run_id, "csv", store=store)[1])
    whole = text_of(export_lines(run_id, "csv", store=store, view=lambda r: r)[1])
    assert fast == whole
    rows = list(csv.DictReader(io.StringIO(fast)))
    assert rows[0]["item_id"] == "id\\ud800" and rows[0]["input"] == "in\\udfff"
    # a JSON cell stays exact JSON: the escape reads back as the character
    assert json.loads(rows[0]["output"]) == {f"key{LONE}": [f"val{LOW}", 1e-07]}
    assert rows[1]["error"] == "boom\\ud800"


def test_the_store_lines_are_valid_utf8(store: Store) -> None:
    run_id = stored(store)
    for lines in store.run_queries.export_lines(run_id):
        for line in lines:
            line.encode("utf-8")


def test_escaping_is_the_json_dumps_spelling_and_leaves_other_text_alone() -> None:
    assert escape_lone_surrogates(json.dumps({"a": LONE}, ensure_ascii=False)) == json.dumps(
        {"a": LONE}
    )
    for text in ["", "plain", "é ✓ 😀", "\\ud800 written out"]:
        assert escape_lone_surrogates(text) == text
    assert to_json_text({"x": [1e-07, "é"]}) == '{"x":[1e-7,"é"]}'  # pydantic-core's spelling
    value = {f"k{LONE}": ["\x00", "\uf8ffu d800", "\uf8ffe", f"{LOW}{LONE}"]}
    assert json.loads(to_json_text(value)) == value
