"""Every stored JSON value comes back exactly as it went in, on SQLite and PostgreSQL:
equal and of the same type (floats by ``repr``, object keys in the same order), through a
dataset item, a run's results and scores, and the exports read straight from the rows.

Why these values: SQLite converts a ``JSON``-declared (NUMERIC affinity) column's text
``1.0`` to the integer ``1`` and ``2**64`` to a float; PostgreSQL's JSONB prints ``1e22`` as
the integer ``10000000000000000000000`` and drops the sign of ``-0.0``. Strings that look
like numbers must stay strings.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from assay.datasets.formats.csv import text_cell
from assay.operations.run_items import export_lines
from assay.store import Store
from assay.types import (
    Item,
    ItemResult,
    JudgeCall,
    RunInfo,
    ScoreResult,
    ScorerSpec,
    TargetSpec,
)

FLOATS: list[float] = [1.0, -0.0, 1e-07, 1e22, 1.5e300, 5e-324, 0.1]
INTS: list[int] = [2**63, 2**64, -(2**63) - 1, 12345678901234567890123]
TEXTS: list[str] = ["1.0", "12", "-0", "1e22"]
VALUES: list[Any] = [*FLOATS, *INTS, *TEXTS]
NESTED: list[Any] = [
    list(VALUES),
    {f"k{n}": value for n, value in enumerate(VALUES)},
    {"z": [{"b": 1.0, "a": [2**64, -0.0]}], "a": 1e22},
]
"""The same values inside lists and objects (keys deliberately not in sorted order)."""
ALL: list[Any] = [*VALUES, *NESTED]


def same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same JSON value of the same Python types: floats by
    ``repr`` (``-0.0`` is not ``0.0``), ints exactly, objects with their keys in order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def mismatches(pairs: list[tuple[Any, Any]]) -> list[str]:
    return [f"{a!r} came back as {b!r}" for a, b in pairs if not same(a, b)]


def item_pairs(sent: Item, got: Any) -> list[tuple[Any, Any]]:
    """An item's five JSON fields, as sent and as read back (an ``Item`` or a work unit)."""
    return [
        (sent.input, got.input),
        (sent.output, got.output),
        (sent.expected_output, got.expected_output),
        (sent.context, got.context),
        (sent.metadata, got.metadata),
    ]


def test_the_comparison_tells_types_and_signs_apart() -> None:
    assert same([1.0, {"a": 2**64}], [1.0, {"a": 2**64}])
    assert not same(1.0, 1)
    assert not same(-0.0, 0.0)
    assert not same(2**64, float(2**64))
    assert not same("1.0", 1.0)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_dataset_items_keep_every_value_and_type(store: Store) -> None:
    store.datasets.create("exact")
    items = [
        Item(
            id=f"i{n}",
            input=value,
            output=value,
            expected_output=value,
            context=value,
            metadata={"value": value, "list": [value]},
        )
        for n, value in enumerate(ALL)
    ]
    store.datasets.add_items("exact", items)
    back = {item.id: item for item in store.datasets.items("exact")}
    pairs: list[tuple[Any, Any]] = []
    for item in items:
        got = back[item.id]
        pairs += item_pairs(item, got)
        one = store.datasets.get_item("exact", item.id)
        pairs.append((item.input, one.input))
    assert mismatches(pairs) == []


def test_updating_an_item_to_the_same_value_of_another_type_is_a_change(store: Store) -> None:
    """``1.0`` and ``1`` are different values: storing one over the other is a new version,
    and the item reads back as the new one."""
    store.datasets.create("changes")
    store.datasets.add_items("changes", [Item(id="a", input=1.0, expected_output=1e22)])
    store.datasets.add_items(
        "changes", [Item(id="a", input=1, expected_output=10**22)], on_existing="upsert"
    )
    (item,) = store.datasets.items("changes")
    assert mismatches([(1, item.input), (10**22, item.expected_output)]) == []


def run_info(run_id: str) -> RunInfo:
    return RunInfo(
        id=run_id,
        target=TargetSpec(kind="callable", label="app:answer", ref="app:answer"),
        scorers=[ScorerSpec(id="s", label="S")],
        concurrency=1,
        repeats=1,
        created_at=1_700_000_000.0,
    )


def result(position: int, value: Any) -> ItemResult:
    """A result carrying ``value`` in every JSON cell a value can reach."""
    score = ScoreResult(
        scorer_id="s",
        scorer_label="S",
        call_id="c",
        status="ready",
        score=0.5,
        values={"f": value}
        if isinstance(value, float)
        else {f"f{n}": f for n, f in enumerate(FLOATS)},
        corpus=value,
        steps={"score": value},
        judge_calls=[
            JudgeCall(step="score", status="success", prompt="p", model_id="m", output=value)
        ],
    )
    return ItemResult(
        item_id=f"i{position}",
        position=position,
        input=value,
        output=value,
        expected_output=value,
        scores={"s": score},
        started_at=1_700_000_000.0,
        completed_at=1_700_000_001.0,
    )


def stored_run(store: Store) -> tuple[str, list[ItemResult]]:
    store.runs.create(run_info("exact-run"))
    results = [result(n, value) for n, value in enumerate(ALL)]
    store.runs.write_results("exact-run", results)
    return "exact-run", results


def result_pairs(sent: ItemResult, got: ItemResult) -> list[tuple[Any, Any]]:
    score, back = sent.scores["s"], got.scores["s"]
    return [
        (sent.input, got.input),
        (sent.output, got.output),
        (sent.expected_output, got.expected_output),
        (score.values, back.values),
        (score.corpus, back.corpus),
        (score.steps, back.steps),
        (score.judge_calls[0].output, back.judge_calls[0].output),
    ]


def test_results_scores_and_judge_calls_keep_every_value_and_type(store: Store) -> None:
    run_id, results = stored_run(store)
    for trusted in (False, True):
        back = {r.item_id: r for r in store.runs.results(run_id, trusted=trusted)}
        pairs = [p for sent in results for p in result_pairs(sent, back[sent.item_id])]
        assert mismatches(pairs) == [], f"trusted={trusted}"


def test_score_rows_and_corpus_rows_keep_floats_and_values(store: Store) -> None:
    run_id, results = stored_run(store)
    corpus = {position: value for position, _, value in store.runs.corpus_rows(run_id, "s")}
    rows = {row.position: row for row in store.runs.score_rows(run_id)}
    pairs: list[tuple[Any, Any]] = []
    for sent in results:
        pairs.append((sent.scores["s"].corpus, corpus[sent.position]))
        pairs.append((sent.scores["s"].values, rows[sent.position].values))
    assert mismatches(pairs) == []


def test_the_export_dicts_and_json_lines_keep_every_value_and_type(store: Store) -> None:
    run_id, results = stored_run(store)
    dicts = {d["item_id"]: d for d in store.run_queries.export_dicts(run_id)}
    _, pieces = export_lines(run_id, "jsonl", store=store)
    lines = {d["item_id"]: d for d in map(json.loads, "".join(pieces).splitlines())}
    pairs: list[tuple[Any, Any]] = []
    for sent in results:
        expected = sent.model_dump(mode="json")
        for exported in (dicts[sent.item_id], lines[sent.item_id]):
            for key in ("input", "output", "expected_output"):
                pairs.append((expected[key], exported[key]))
            for key in ("values", "corpus", "steps"):
                pairs.append((expected["scores"]["s"][key], exported["scores"]["s"][key]))
            pairs.append(
                (
                    expected["scores"]["s"]["judge_calls"][0]["output"],
                    exported["scores"]["s"]["judge_calls"][0]["output"],
                )
            )
    assert mismatches(pairs) == []


def test_csv_cells_are_the_values_json_text(store: Store) -> None:
    """A non-text value's cell is its JSON as Python writes it (``1.0``, ``-0.0``,
    ``1e-07``, every digit of a big integer); a text's cell is the text (both written as
    the dataset CSV writes a text: ``-0.0`` with a leading apostrophe)."""
    run_id, results = stored_run(store)
    _, pieces = export_lines(run_id, "csv", store=store)
    rows = {row["item_id"]: row for row in csv.DictReader(io.StringIO("".join(pieces)))}
    wrong = []
    for sent in results:
        value = sent.output
        want = text_cell(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key in ("input", "output", "expected_output"):
            if rows[sent.item_id][key] != want:
                wrong.append(f"{key} {value!r}: {rows[sent.item_id][key]!r}")
    assert wrong == []


def test_a_runs_inline_items_and_work_units_keep_every_value_and_type(store: Store) -> None:
    items = [
        Item(id=f"i{n}", input=v, output=v, expected_output=v, context=v, metadata={"v": v})
        for n, v in enumerate(ALL)
    ]
    store.runs.create(run_info("inline"), items)
    back = list(store.runs.inline_items("inline"))
    store.work_units.seed("inline", [(n, item, 0) for n, item in enumerate(items)])
    claimed = sorted(store.work_units.claim("inline", "me", len(items)), key=lambda u: u[0])
    pairs: list[tuple[Any, Any]] = []
    for item, inline, (_, unit, _) in zip(items, back, claimed, strict=True):
        for got in (inline, unit):
            pairs += item_pairs(item, got)
    assert mismatches(pairs) == []
