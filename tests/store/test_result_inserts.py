"""``store.result_inserts``: results inserted as driver SQL store exactly the rows the
SQLAlchemy inserts stored (compared as the database holds them, column by column), and
hostile text round-trips through them; on SQLite and PostgreSQL."""

from __future__ import annotations

import gc
from typing import Any

import pytest
import sqlalchemy as sa

from assay.store import DuplicateItemError, Store
from assay.store.codec import NUL_ESCAPE, IdSource, escape_nul
from assay.store.datasets_repo import item_columns, item_from_row
from assay.store.result_export import result_dicts
from assay.store.result_inserts import (
    _CALL_WIDTH,
    _COLUMNS,
    _ITEM_WIDTH,
    _SCORE_WIDTH,
    RUN_ITEM_COLUMNS,
    encode_result,
    result_key,
    result_rows_of,
)
from assay.store.results_codec import result_rows
from assay.store.tables import item_results, judge_calls, run_items, scores
from assay.types import Item, ItemResult, ScoreResult, TargetError, Usage
from tests.store.factories import error_score, item_result, judge_call, not_scorable, ready_score
from tests.store.test_runs import run_info

NUL = "\x00"
ASTRAL = "\U0001d11e\U0001f600"  # outside the BMP: 4 bytes in UTF-8
LONE = "\ud800"  # a lone surrogate: UTF-8 cannot encode it
HOSTILE = f"a{NUL}b{ASTRAL}{LONE}\udfff{NUL_ESCAPE}0{NUL_ESCAPE}u d800 é\n\t\\\"'"


def _varied_results() -> list[ItemResult]:
    """Every column shape a result can take: target errors, each score status, judge
    calls with and without usage, values, corpus payloads, warnings with usage and cost,
    meta, non-finite floats, hostile text, and ``None`` wherever a column allows it."""
    hostile_score = ScoreResult(
        scorer_id="hostile",
        scorer_label=f"Hostile {ASTRAL}",
        call_id="c-h",
        status="ready",
        score=0.125,
        values={f"k{NUL}": 1.5, "neg": -0.5, ASTRAL + LONE: 2.0},
        corpus={"tp": 3, "text": HOSTILE},
        reason=HOSTILE,
        steps={"analyze": {HOSTILE: [1, None, True]}},
        prompts={"score": HOSTILE},
        judge_calls=[
            judge_call(prompt=HOSTILE, raw_output=HOSTILE, error=HOSTILE, output={"o": HOSTILE}),
            judge_call("reason", output=None, raw_output=None, cost_usd=None, provider=None),
        ],
        duration_ms=7.0,
    )
    results = [
        item_result("plain", 0, scores={"exact": ready_score("exact", 1.0, calls=2)}),
        item_result("plain", 0, 1, scores={"exact": ready_score("exact", 0.0)}),
        item_result(
            "failed",
            1,
            scores={"exact": error_score("exact"), "ns": not_scorable("ns")},
            error=TargetError(kind="Timeout", message=HOSTILE, traceback=HOSTILE),
        ),
        item_result(f"id{NUL}{ASTRAL}{LONE}", 2, scores={"hostile": hostile_score}),
        item_result("noscores", 3),
    ]
    results[3] = results[3].model_copy(
        update={
            "input": {"q": HOSTILE, "n": float("inf"), "t": (1, 2)},
            "output": HOSTILE,
            "expected_output": None,
            "meta": {"sampled": True, "rate": 0.5},
            "usage": Usage(input_tokens=5, output_tokens=1),
            "cost_usd": 0.25,
            "samples": [HOSTILE, "two"],
        }
    )
    results[4] = results[4].model_copy(update={"input": None, "output": None, "latency_ms": None})
    return results


def _stored_columns(
    table: sa.Table, skip: set[str], *, postgres: bool, prefix: str = ""
) -> list[str]:
    """``table``'s columns but ``skip`` as the database holds them: JSON cast to text on
    PostgreSQL, each value beside its storage class (``typeof``) on SQLite."""
    out = []
    for column in table.columns:
        if column.name in skip:
            continue
        name = f'{prefix}"{column.name}"'
        if postgres:
            out.append(f"CAST({name} AS TEXT)" if isinstance(column.type, sa.JSON) else name)
        else:
            out.extend([name, f"typeof({name})"])
    return out


def _raw(store: Store, run_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """The run's rows as the database holds them (no column type decodes them: JSON as
    text, SQLite's storage class beside each value), with generated ids replaced by the
    (item, repeat, scorer, seq) they belong to, so two runs can be compared."""
    engine = store.engine
    postgres = engine.dialect.name == "postgresql"
    marker = "%s" if postgres else "?"

    def columns(table: sa.Table, skip: set[str]) -> list[str]:
        return _stored_columns(table, skip, postgres=postgres, prefix=f"{table.name[0]}.")

    keys = 'i.item_id, i."repeat"'
    queries = {
        "item_results": (
            f"SELECT {keys}, {', '.join(columns(item_results, {'id', 'run_id'}))}"
            f" FROM item_results i WHERE i.run_id = {marker}"
        ),
        "scores": (
            f"SELECT {keys}, {', '.join(columns(scores, {'id', 'result_id'}))}"
            f" FROM scores s JOIN item_results i ON i.id = s.result_id"
            f" WHERE i.run_id = {marker}"
        ),
        "judge_calls": (
            f"SELECT {keys}, s.scorer_id, {', '.join(columns(judge_calls, {'id', 'score_id'}))}"
            f" FROM judge_calls j JOIN scores s ON s.id = j.score_id"
            f" JOIN item_results i ON i.id = s.result_id WHERE i.run_id = {marker}"
        ),
    }
    with engine.connect() as conn:
        found = {}
        for table, query in queries.items():
            rows = conn.exec_driver_sql(query, (run_id,)).all()
            # the Python type of each value too: 1 and 1.0 compare equal but are not
            found[table] = sorted(
                (tuple((type(v).__name__, v) for v in row) for row in rows), key=repr
            )
        return found


def test_driver_sql_stores_the_rows_the_sqlalchemy_inserts_stored(store: Store) -> None:
    results = _varied_results()
    store.runs.create(run_info("driver"))
    store.runs.create(run_info("orm"))
    store.runs.write_results("driver", results)
    item_rows, score_rows, call_rows = result_rows("orm", results)
    with store.engine.begin() as conn:  # the path every batch took before
        conn.execute(item_results.insert(), item_rows)
        conn.execute(scores.insert(), score_rows)
        conn.execute(judge_calls.insert(), call_rows)

    driver, orm = _raw(store, "driver"), _raw(store, "orm")
    assert [len(driver[t]) for t in driver] == [5, 5, 5]
    for table in ("item_results", "scores", "judge_calls"):
        assert driver[table] == orm[table], table
    # and the values read back through the repository are the results written
    back = {(r.item_id, r.repeat): r for r in store.runs.results("driver")}
    hostile = back[(f"id{NUL}{ASTRAL}{LONE}", 0)]
    assert hostile.output == HOSTILE and hostile.input == {"q": HOSTILE, "n": None, "t": [1, 2]}
    assert hostile.samples == [HOSTILE, "two"] and hostile.cost_usd == 0.25
    assert hostile.scores["hostile"].values == {f"k{NUL}": 1.5, "neg": -0.5, ASTRAL + LONE: 2.0}
    assert hostile.scores["hostile"].judge_calls[0].prompt == HOSTILE
    assert back[("failed", 0)].error == results[2].error


def test_hostile_text_and_a_megabyte_output_round_trip(store: Store) -> None:
    big = (HOSTILE + "x" * 997) * 1024  # ~1 MB with NULs, astral characters and surrogates
    results = [
        ItemResult(
            item_id=f"{HOSTILE}{n}",
            position=n,
            input=big if n == 0 else {HOSTILE: HOSTILE},
            output=big,
            expected_output=[HOSTILE, NUL],
            scores={
                "s": ScoreResult(
                    scorer_id="s",
                    scorer_label="S",
                    call_id="c",
                    status="ready",
                    score=0.5,
                    reason=big,
                    judge_calls=[judge_call(prompt=big, raw_output=HOSTILE)],
                )
            },
            warnings=[HOSTILE],
            started_at=1.0,
            completed_at=2.0,
        )
        for n in range(3)
    ]
    store.runs.create(run_info("r"))
    store.runs.write_results("r", results)
    assert list(store.runs.results("r")) == results
    assert store.runs.completed_keys("r") == {(f"{HOSTILE}{n}", 0) for n in range(3)}


def test_a_failing_row_leaves_nothing_of_its_batch(store: Store) -> None:
    """The driver statements run in the batch's transaction: a row the database refuses
    (a duplicate (item, repeat), last in the batch) rolls back the results and scores
    inserted before it, and the run's counters."""
    store.runs.create(run_info("r"))
    store.runs.write_results("r", [item_result("a", 0)])
    scored = {"exact": ready_score("exact", 1.0, calls=1)}
    batch = [item_result("b", 1, scores=scored), item_result("c", 2), item_result("a", 0)]
    with pytest.raises(Exception, match="duplicate results"):
        store.runs.write_results("r", batch)
    assert store.runs.completed_keys("r") == {("a", 0)}
    assert store.runs.get("r").completed_results == 1
    with store.engine.connect() as conn:
        for table in (scores, judge_calls):
            assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one() == 0


def _raw_run_items(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """``run_items`` rows of a run as stored (JSON as text, SQLite storage classes)."""
    postgres = store.engine.dialect.name == "postgresql"
    selected = _stored_columns(run_items, {"run_id"}, postgres=postgres)
    query = (
        f"SELECT {', '.join(selected)} FROM run_items"
        f" WHERE run_id = {'%s' if postgres else '?'} ORDER BY position"
    )
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql(query, (run_id,)).all()
    return [tuple((type(v).__name__, v) for v in row) for row in rows]


def test_inline_items_are_stored_as_the_sqlalchemy_insert_stored_them(store: Store) -> None:
    items = [
        Item(id="plain", input="q", expected_output="a"),
        Item(
            id=f"id{NUL}{ASTRAL}",  # an item id is valid Unicode (no lone surrogate)
            input={"q": HOSTILE, "n": float("nan")},
            output=[HOSTILE],
            expected_output=HOSTILE,
            context={"docs": [HOSTILE, None]},
            metadata={HOSTILE: 1, "f": 0.5},
        ),
        Item(id="output-only", output="o"),
    ]
    store.runs.create(run_info("driver"), items)
    store.runs.create(run_info("orm"))
    with store.engine.begin() as conn:  # the path every inline item took before
        conn.execute(
            run_items.insert(),
            [
                {**item_columns(item), "run_id": "orm", "position": position}
                for position, item in enumerate(items)
            ],
        )
    assert _raw_run_items(store, "driver") == _raw_run_items(store, "orm")
    back = list(store.runs.inline_items("driver"))
    with store.engine.connect() as conn:  # the column types' decoding, validated items
        query = sa.select(run_items).where(run_items.c.run_id == "orm").order_by("position")
        assert back == [item_from_row(row) for row in conn.execute(query)]
    assert [item.id for item in back] == [item.id for item in items]
    assert back[1].input == {"q": HOSTILE, "n": None} and back[1].metadata == {HOSTILE: 1, "f": 0.5}
    assert back[1].context == {"docs": [HOSTILE, None]} and back[2] == items[2]


@pytest.mark.parametrize(
    ("table", "names"),
    [*_COLUMNS, (run_items, RUN_ITEM_COLUMNS)],
    ids=lambda v: getattr(v, "name", ""),
)
def test_the_insert_names_every_column_of_its_table(
    table: sa.Table, names: tuple[str, ...]
) -> None:
    """A column added to a table must be added to its driver insert too (or it would be
    silently left at its default by every stored run)."""
    generated = {"id"} if table is judge_calls else set()
    assert set(names) == {column.name for column in table.columns} - generated
    assert len(names) == len(set(names))


def test_a_repeated_hostile_item_id_in_a_later_chunk_is_refused_by_name(store: Store) -> None:
    """The earlier-chunk check compares the ids as stored (NUL escaped) and names the id as
    given; nothing of the run is stored."""
    odd = f"x{NUL}{ASTRAL}{NUL_ESCAPE}"
    store.runs.CHUNK = 2
    items = [Item(id=odd, input=1), Item(id="b", input=2), Item(id="c", input=3)]
    with pytest.raises(DuplicateItemError) as caught:
        store.runs.create(run_info("dup"), [*items, Item(id=odd, input=4)])
    assert caught.value.item_id == odd
    assert not store.runs.exists("dup")
    store.runs.create(run_info("ok"), items)  # the same ids once each are fine
    assert [item.id for item in store.runs.inline_items("ok")] == [odd, "b", "c"]


def test_numbers_in_json_columns_read_back_as_numbers(store: Store) -> None:
    """A bare number (the JSON text ``3``, which a ``JSON``-declared SQLite column turned
    into the integer 3 before migration 0014) reads back as that number, in the inline
    items' reader and the export's reader."""
    items = [Item(id="a", input=1, expected_output=2.5), Item(id="b", input="1", output=-7)]
    store.runs.create(run_info("r"), items)
    assert list(store.runs.inline_items("r")) == items
    result = item_result("a", 0).model_copy(update={"input": 1, "output": 3, "meta": {"n": 1}})
    store.runs.write_results("r", [result])
    (line,) = result_dicts(store._db, "r")
    assert (line["input"], line["output"], line["meta"]) == (1, 3, {"n": 1})


def test_an_inline_item_edited_into_a_wrong_shape_fails_naming_its_field(store: Store) -> None:
    """Stored items are read back validated: a store file edited by hand (metadata that is
    no longer an object) fails on that item with pydantic naming ``metadata``, instead of
    handing the run an ``Item`` whose ``metadata`` is a list."""
    from pydantic import ValidationError

    store.runs.create(run_info("edited"), [Item(id="a", input=1), Item(id="b", input=2)])
    with store.engine.begin() as conn:
        conn.execute(
            run_items.update()
            .where(run_items.c.run_id == "edited", run_items.c.item_id == "b")
            .values(meta=sa.literal_column("'[1, 2]'"))
        )
    items = store.runs.inline_items("edited")
    assert next(items).id == "a"
    with pytest.raises(ValidationError, match="metadata"):
        next(items)


def test_encoded_results_are_untracked_by_the_collector() -> None:
    """What the store writer's queue holds (``encode_result``) must be invisible to the
    cyclic collector once it has seen it: only then is nothing promoted to the oldest
    generation while it waits (the cost this encoding removes). Every column shape,
    hostile text and judge calls included; the ``ItemResult``s themselves stay tracked."""
    results = _varied_results()
    new_id = IdSource()
    encoded = [encode_result("r", result, new_id) for result in results]
    gc.collect()
    assert all(gc.is_tracked(result) for result in results)
    for result, rows in zip(results, encoded, strict=True):
        assert type(rows) is tuple and not gc.is_tracked(rows), result.item_id
        assert result_key(rows) == (result.item_id, result.repeat)


def test_an_encoded_result_splits_into_rows_of_the_tables_columns() -> None:
    """The flat encoding's widths are the tables' column lists, and it splits back into
    one item row, one row per score and one per judge call, in order."""
    assert [len(names) for _, names in _COLUMNS] == [_ITEM_WIDTH, _SCORE_WIDTH, _CALL_WIDTH]
    results = _varied_results()
    new_id = IdSource()
    items, score_rows, calls = result_rows_of([encode_result("r", r, new_id) for r in results])
    assert [row[2:4] for row in items] == [(escape_nul(r.item_id), r.repeat) for r in results]
    assert [len(row) for row in items] == [_ITEM_WIDTH] * len(results)
    expected_scores = [(s.scorer_id, s.status) for r in results for s in r.scores.values()]
    assert [(row[2], row[5]) for row in score_rows] == expected_scores
    expected_calls = [
        (c.step, c.prompt) for r in results for s in r.scores.values() for c in s.judge_calls
    ]
    assert [(row[2], row[8]) for row in calls] == [
        (step, escape_nul(prompt)) for step, prompt in expected_calls
    ]


def test_encoded_and_unencoded_results_store_the_same_rows(store: Store) -> None:
    """``write_results`` takes results encoded already (the sink's queue) or not, alike."""
    results = _varied_results()
    store.runs.create(run_info("plain"))
    store.runs.create(run_info("encoded"))
    store.runs.write_results("plain", results)
    new_id = IdSource()
    store.runs.write_results("encoded", [encode_result("encoded", r, new_id) for r in results])
    plain, encoded = _raw(store, "plain"), _raw(store, "encoded")
    for table in ("item_results", "scores", "judge_calls"):
        assert plain[table] == encoded[table], table
    assert list(store.runs.results("encoded")) == list(store.runs.results("plain"))
    assert store.runs.get("encoded").failed_results == store.runs.get("plain").failed_results == 1
