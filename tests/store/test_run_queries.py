"""``store.run_queries``: filtered pages and comparison rows, on SQLite and PostgreSQL."""

from __future__ import annotations

import numpy as np
import pytest

from assay.store import Store, open_store
from assay.store.errors import RunNotFoundError
from assay.store.run_queries import ResultFilter
from assay.types import ItemResult, RunInfo, ScoreResult, ScorerSpec, TargetError, TargetSpec


def _score(value: float | None, status: str = "ready") -> ScoreResult:
    if status == "error":
        from assay.types import ScoreError

        return ScoreResult(
            scorer_id="s",
            scorer_label="S",
            call_id="c",
            status="error",
            error=ScoreError(message="x"),
        )
    return ScoreResult(scorer_id="s", scorer_label="S", call_id="c", status="ready", score=value)


def _run(store: Store, run_id: str, values: list[float | None]) -> None:
    spec = ScorerSpec(id="s", label="S")
    store.runs.create(
        RunInfo(id=run_id, target=TargetSpec(kind="stored-output", label="stored"), scorers=[spec])
    )
    results = []
    for position, value in enumerate(values):
        error = TargetError(message="boom") if value is None else None
        scores = {} if value is None else {"s": _score(value)}
        results.append(
            ItemResult(
                item_id=f"i{position}",
                position=position,
                input=f"question {position}",
                output="100%" if position == 1 else f"answer {position}",
                error=error,
                scores=scores,
            )
        )
    store.runs.write_results(run_id, results)


def test_pages_filters_and_counts(store_url: str) -> None:
    with open_store(store_url) as store:
        _run(store, "r1", [0.1, 0.9, None, 0.5])
        q = store.run_queries

        def ids(wanted: ResultFilter, offset: int = 0, limit: int = 10) -> tuple[int, list[str]]:
            page = q.page("r1", wanted, offset=offset, limit=limit)
            return q.count("r1", wanted), [r.item_id for r in page]

        assert ids(ResultFilter(), 1, 2) == (4, ["i1", "i2"])
        assert ids(ResultFilter(min_score=0.5)) == (2, ["i1", "i3"])
        assert ids(ResultFilter(min_score=0.2, max_score=0.6, scorer="s")) == (1, ["i3"])
        assert ids(ResultFilter(scorer="other")) == (0, [])
        assert ids(ResultFilter(errors_only=True)) == (1, ["i2"])
        assert ids(ResultFilter(q="ANSWER 3")) == (1, ["i3"])
        assert ids(ResultFilter(q="100%")) == (1, ["i1"])
        assert ids(ResultFilter(q="0%")) == (1, ["i1"])  # % is literal, not a wildcard
        page = q.page("r1", ResultFilter(), offset=0, limit=1)
        assert page[0].scores["s"].score == 0.1
        assert [r.item_id for r in q.item("r1", "i3")] == ["i3"]


def test_compare_rows_worst_first_in_the_scorers_direction(store_url: str) -> None:
    with open_store(store_url) as store:
        _run(store, "base", [0.5, 0.5, 0.5])
        _run(store, "new", [0.9, 0.1, 0.5])
        _run(store, "third", [0.4, 0.6, 0.5])
        total, rows = store.run_queries.compare_rows("base", ["new"])
        assert total == 3
        assert [r.item_id for r in rows] == ["i1", "i2", "i0"]
        assert [r.deltas[0] for r in rows] == pytest.approx([-0.4, 0.0, 0.4])
        assert [r.baseline for r in rows] == [0.5, 0.5, 0.5]
        _, lower = store.run_queries.compare_rows("base", ["new"], lower_is_better=["s"])
        assert [r.item_id for r in lower] == ["i0", "i2", "i1"]  # a rise is worse
        _, both = store.run_queries.compare_rows("base", ["new", "third"], limit=1, offset=0)
        assert both[0].item_id == "i1" and len(both[0].scores) == 2
        _, two = store.run_queries.compare_rows("base", ["third", "new"])
        assert [r.item_id for r in two][:1] == ["i1"]  # the worst over all runs decides


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("single", [False, True])
def test_compare_state_filter_over_the_whole_comparison(
    store_url: str, lower: bool, single: bool
) -> None:
    base = [0.5, 0.5, 0.5, 0.5, None, 0.2, 0.8, 0.5]
    new = [0.9, 0.1, 0.5, 0.45, 0.3, None, 0.8, 0.52]
    third = [0.5, 0.6, 0.2, 0.5, 0.5, 0.5, 0.9, 0.5]
    with open_store(store_url) as store:
        _run(store, "base", base)
        _run(store, "new", new)
        _run(store, "third", third)
        q = store.run_queries
        for others in (["new"], ["new", "third"]):
            for threshold in (0.0, 0.04):
                kw = {"lower_is_better": ["s"] if lower else [], "single_repeat": single}
                _, every = q.compare_rows("base", others, limit=100, threshold=threshold, **kw)
                sign = -1.0 if lower else 1.0

                def kind(
                    deltas: tuple[float | None, ...], t: float = threshold, s: float = sign
                ) -> str:
                    signed = [s * d for d in deltas if d is not None]
                    if any(d < -t for d in signed):
                        return "regressed"
                    return "improved" if any(d > 0 for d in signed) else "same"

                kinds = {kind(row.deltas) for row in every}
                assert {"regressed", "improved"} <= kinds
                assert "same" in kinds or len(others) == 2
                for state in ("regressed", "improved", "same"):
                    expected = [r for r in every if kind(r.deltas) == state]
                    total, first = q.compare_rows(
                        "base", others, limit=2, state=state, threshold=threshold, **kw
                    )
                    _, rest = q.compare_rows(
                        "base", others, offset=2, limit=100, state=state, threshold=threshold, **kw
                    )
                    assert (total, first + rest) == (len(expected), expected)


def test_single_repeat_path_gives_the_same_rows(store_url: str) -> None:
    with open_store(store_url) as store:
        _run(store, "base", [0.5, None, 0.2, 0.9])
        _run(store, "new", [0.1, 0.4, 0.2, 1.0])
        grouped = store.run_queries.compare_rows("base", ["new"], limit=10)
        direct = store.run_queries.compare_rows("base", ["new"], limit=10, single_repeat=True)
        assert direct == grouped
        assert [r.item_id for r in direct[1]] == ["i0", "i2", "i3"]  # i1 failed in the baseline


def test_score_arrays_hold_the_score_rows_columnar(store_url: str) -> None:
    with open_store(store_url) as store:
        _run(store, "cols", [0.25, None, 0.75])
        extra = ScoreResult(
            scorer_id="t",
            scorer_label="T",
            call_id="c",
            status="ready",
            score=1.0,
            values={"p": 0.5},
        )
        store.runs.write_results(
            "cols",
            [
                ItemResult(
                    item_id="i3",
                    position=3,
                    repeat=1,
                    input="q",
                    scores={
                        "s": _score(None, "error"),
                        "t": extra,
                    },
                )
            ],
        )
        arrays = store.run_queries.score_arrays("cols")
        rows = list(store.runs.score_rows("cols"))
        assert len(arrays) == len(rows) == 4
        assert arrays.item_id == [r.item_id for r in rows]
        assert arrays.position.tolist() == [r.position for r in rows]
        assert arrays.repeat.tolist() == [r.repeat for r in rows]
        assert arrays.scorer_id == [r.scorer_id for r in rows]
        assert arrays.status == [r.status for r in rows] == ["ready", "ready", "error", "ready"]
        assert arrays.score[:2].tolist() == [0.25, 0.75] and np.isnan(arrays.score[2])
        assert arrays.values == [(3, {"p": 0.5})]
        with pytest.raises(RunNotFoundError):
            store.run_queries.score_arrays("nope")


def test_first_outputs_reads_each_items_first_repeat_in_one_go(store_url: str) -> None:
    with open_store(store_url) as store:
        _run(store, "r", [0.5, 0.25, None])
        store.runs.write_results(
            "r", [ItemResult(item_id="i0", repeat=1, position=0, output="second repeat")]
        )
        found = store.run_queries.first_outputs("r", ["i0", "i2", "i0", "missing"])
        assert found == {"i0": ("answer 0", None, None), "i2": ("answer 2", "Exception", "boom")}
        assert store.run_queries.first_outputs("r", []) == {}
        with pytest.raises(RunNotFoundError):
            store.run_queries.first_outputs("nope", ["i0"])


HOSTILE_TEXTS: list[object] = [
    "100% sure_thing",
    'it\'s "quoted" and back\\slash',
    "NUL\x00inside and a\ttab\nnewline",
    "École ÉCOLE école",
    "\u212a kelvin sign and K k",  # the Kelvin sign folds to "k" under Unicode folding
    "ſtraße STRASSE strasse",  # long s folds to "s"; ß to "ss"
    "İstanbul istanbul ISTANBUL",  # Python lower-cases "İ" to two characters
    "emoji 🙂🙃 and combining e\u0301",
    {"key": "Value", "n": 1.5, "list": [1, None, True], "nested": {"a%b": "c_d"}},
    ["a", "b", "%_"],
    12345,
    None,
    "",
    "gamma GAMMA Gamma gAmMa",
    "aaa",
]
HOSTILE_NEEDLES = [
    "%", "_", "\\", "\\\\", "'", '"', '""', "\x00", "nul\x00ins", "100%", "0% s", "e_t",
    "école", "ÉCOLE", "cole", "É", "k", "kelvin", "\u212a", "\u212a k", "k k", "ſtr",
    "str", "straße", "strasse", "ß", "ss", "İstanbul", "istanbul", "i̇st", "🙂", "🙂🙃",
    "e\u0301", "\u0301", '{"key', '"value"', "value", ": 1.5", "null", "true", "[1, null",
    "a%b", "c_d", '"%_"', "123", "2345", "gamma", "GAMMA", "amm", "ga", "aa", "aaa", "aaaa",
    "\\n", "\\t", "\\u0000", "n\\tab", "tab\\n", "\\\"quoted", "   ", "\t", "x" * 300,
]  # fmt: skip


def _hostile_run(store: Store, run_id: str) -> None:
    spec = ScorerSpec(id="s", label="S")
    store.runs.create(
        RunInfo(id=run_id, target=TargetSpec(kind="stored-output", label="stored"), scorers=[spec])
    )
    results = [
        ItemResult(
            item_id=f"{run_id}-{k}",
            position=k,
            input=text,
            output=HOSTILE_TEXTS[(k + 3) % len(HOSTILE_TEXTS)],
            expected_output=HOSTILE_TEXTS[(k + 7) % len(HOSTILE_TEXTS)] if k % 2 else None,
            scores={"s": _score(k / len(HOSTILE_TEXTS))},
        )
        for k, text in enumerate(HOSTILE_TEXTS)
    ]
    store.runs.write_results(run_id, results)


def test_text_search_index_finds_what_the_scan_finds(store_url: str) -> None:
    """Each database's fast search (PostgreSQL: the lower-cased copy; SQLite: plain
    ``LIKE`` without ``lower(CAST(...))``) against the reference scan, on hostile text
    and needles: wildcards, quotes, backslashes, NUL, case folding beyond ASCII (where
    SQLite's ``LIKE`` and ``lower()`` must agree), short needles. Every needle must give
    the same count, page and rank."""
    from assay.store.run_queries import RunQueries

    with open_store(store_url) as store:
        _hostile_run(store, "h1")
        _hostile_run(store, "h2")  # the same texts in a second run: bounds keep to one run
        store.runs.delete("h2")  # its rows leave the index (a contentless FTS5 delete)
        _hostile_run(store, "h3")
        fast = store.run_queries
        scan = RunQueries(store._db, text_index=False)
        needles = [*HOSTILE_NEEDLES, *(n.upper() for n in HOSTILE_NEEDLES)]
        found_some = 0
        for run_id in ("h1", "h3"):
            for needle in needles:
                wanted = ResultFilter(q=needle)
                expected = [r.item_id for r in scan.page(run_id, wanted, offset=0, limit=500)]
                got = [r.item_id for r in fast.page(run_id, wanted, offset=0, limit=500)]
                assert got == expected, needle
                assert fast.count(run_id, wanted) == scan.count(run_id, wanted) == len(got)
                found_some += bool(got)
                for descending in (False, True):
                    pairs, reference = (
                        queries.ranked_items(
                            run_id,
                            wanted,
                            scorer="s",
                            descending=descending,
                            offset=0,
                            limit=500,
                            single_repeat=True,
                        )
                        for queries in (fast, scan)
                    )
                    assert pairs[0] == reference[0], needle
                    assert [i for i, _ in pairs[1]] == [i for i, _ in reference[1]], needle
        assert found_some > len(needles)  # the needles do match things, in both runs
        # a NUL in the needle finds the stored NUL (escaped in storage) on both databases
        assert [r.item_id for r in fast.page("h1", ResultFilter(q="NUL\x00INS"), offset=0, limit=9)]


def test_text_index_follows_deleted_runs(store_url: str) -> None:
    """Deleting a run (its results cascade) takes its rows out of the index: a search in
    a run stored afterwards finds only its own results, as the scan does."""
    from assay.store.run_queries import RunQueries

    with open_store(store_url) as store:
        _hostile_run(store, "gone")
        store.runs.delete("gone")
        _hostile_run(store, "kept")
        scan = RunQueries(store._db, text_index=False)
        for needle in ("gamma", "école", "100%", "key"):
            wanted = ResultFilter(q=needle)
            got = [r.item_id for r in store.run_queries.page("kept", wanted, offset=0, limit=99)]
            assert got == [r.item_id for r in scan.page("kept", wanted, offset=0, limit=99)]
            assert got and all(item_id.startswith("kept-") for item_id in got)


def test_score_range_counts_from_the_stored_means(store_url: str) -> None:
    """A one-result-per-item run reads a score range from the stored means (alone, or with
    a search, errors only, a status); it must agree with the results' scores, bounds
    included, in counts and pages."""
    with open_store(store_url) as store:
        _run(store, "r1", [0.1, 0.9, None, 0.5, 0.2, 0.2, 1.0, 0.0])
        q = store.run_queries
        for low, high in [(0.2, 0.5), (None, 0.2), (0.5, None), (0.0, 1.0), (0.3, 0.31)]:
            for status in (None, "ready", "error"):
                for text, errors in [(None, False), ("answer", False), ("1", True)]:
                    wanted = ResultFilter(
                        scorer="s",
                        min_score=low,
                        max_score=high,
                        status=status,
                        q=text,
                        errors_only=errors,
                    )
                    count = q.count("r1", wanted)
                    assert q.count("r1", wanted, single_repeat=True) == count, wanted
                    pages = [
                        [r.item_id for r in q.page("r1", wanted, offset=1, limit=3, **one)]
                        for one in ({}, {"single_repeat": True})
                    ]
                    assert pages[0] == pages[1], wanted
                    assert len(pages[0]) == max(0, min(3, count - 1))
        assert q.count("r1", ResultFilter(scorer="s", status="ready"), single_repeat=True) == 7
        with pytest.raises(RunNotFoundError):
            q.count("missing", ResultFilter())


def test_text_index_migration_backfills_and_downgrades(store_url: str) -> None:
    """0010 copies the results stored before it (PostgreSQL; SQLite has no index and the
    search is the scan); its downgrade removes the copy and its triggers."""
    import sqlalchemy as sa
    from alembic import command

    from assay.store.engine import _alembic_config
    from assay.store.run_queries import RunQueries

    with open_store(store_url) as store:
        _hostile_run(store, "before")
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), "0009")
        names = set(sa.inspect(store.engine).get_table_names())
        assert not any(name.startswith("item_results_text") for name in names)
        with store.engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), "head")
        # "before" was stored before the downgrade: the upgrade backfilled it. (Results
        # cannot be written between: 0011's downgrade took away a column they carry.)
        _hostile_run(store, "between")
        scan = RunQueries(store._db, text_index=False)
        for run_id in ("before", "between"):
            for needle in ("gamma", "école", "key", "100%"):
                wanted = ResultFilter(q=needle)
                got = store.run_queries.page(run_id, wanted, offset=0, limit=99)
                expected = scan.page(run_id, wanted, offset=0, limit=99)
                assert [r.item_id for r in got] == [r.item_id for r in expected] != []


def test_text_index_holds_only_results_that_went_in(store_url: str) -> None:
    """A scaled-out worker's batch skips results the run already holds (``skip_stored``):
    the skipped copy's text must not become searchable."""
    from assay.store.run_queries import RunQueries
    from assay.store.runs_repo import insert_results

    with open_store(store_url) as store:
        store.runs.create(RunInfo(id="r", target=TargetSpec(kind="stored-output", label="s")))
        store.runs.write_results("r", [ItemResult(item_id="a", position=0, input="alpha one")])
        again = [
            ItemResult(item_id="a", position=0, input="alpha duplicate"),
            ItemResult(item_id="b", position=1, input="alpha two"),
        ]
        with store.engine.begin() as conn:
            assert insert_results(conn, "r", again, skip_stored=True) == 1
        scan = RunQueries(store._db, text_index=False)
        for needle, found in [("alpha", 2), ("duplicate", 0), ("two", 1), ("one", 1)]:
            wanted = ResultFilter(q=needle)
            assert store.run_queries.count("r", wanted) == scan.count("r", wanted) == found
            pages = [q.page("r", wanted, offset=0, limit=9) for q in (store.run_queries, scan)]
            assert [r.item_id for r in pages[0]] == [r.item_id for r in pages[1]]


def _mixed_run(store: Store, run_id: str, n: int = 240) -> None:
    """``n`` one-result items: hostile texts and common words, scores spread over [0, 1]
    (every seventh item failed, without a score), so ranges and needles cut both ways."""
    spec = ScorerSpec(id="s", label="S")
    store.runs.create(
        RunInfo(id=run_id, target=TargetSpec(kind="stored-output", label="stored"), scorers=[spec])
    )
    words = ["alpha", "Gamma", "delta", "ÉCOLE"]
    results = []
    for k in range(n):
        failed = k % 7 == 3
        results.append(
            ItemResult(
                item_id=f"{run_id}-{k:03d}",
                position=k,
                input=HOSTILE_TEXTS[k % len(HOSTILE_TEXTS)],
                output=f"{words[k % 4]} {words[(k * 5) % 4]} {k}",
                expected_output=words[k % 3] if k % 2 else None,
                error=TargetError(message="boom") if failed else None,
                scores={} if failed else {"s": _score(((k * 37) % n) / n)},
            )
        )
    store.runs.write_results(run_id, results)


RANGE_NEEDLES = ["gamma", "GAMMA", "école", "É", "100%", "e_t", "k", "\u212a", "aaa", "nul\x00ins"]
RANGE_BOUNDS = [(0.2, 0.4), (None, 0.1), (0.5, None), (0.3, 0.31), (0.9, 0.95)]


def test_score_range_with_a_search_is_what_the_scan_finds(store_url: str) -> None:
    """A score range combined with a text search on a one-result-per-item run (issue 25:
    PostgreSQL counts it on the text copy joined to the stored means by item id,
    migration 0012; SQLite's plain ``LIKE``; a ranked page walks the range of the means
    or groups): counts, pages, counted pages and ranks must equal the reference scan's
    (``lower(CAST(...)) LIKE`` and a probe of every result's scores), on hostile text."""
    from assay.store.run_queries import RunQueries

    with open_store(store_url) as store:
        _mixed_run(store, "m1")
        _mixed_run(store, "m2")  # the same texts in a second run: bounds keep to one run
        fast = store.run_queries
        walking, grouping = RunQueries(store._db), RunQueries(store._db)
        walking.WALK_SHARE = 0  # always walk the means (when the filter lets it)
        grouping.WALK_SHARE = 10**9  # always group
        scan = RunQueries(store._db, text_index=False)
        compared = 0
        for low, high in RANGE_BOUNDS:
            for needle in RANGE_NEEDLES:
                for status in (None, "ready"):
                    wanted = ResultFilter(
                        scorer="s", min_score=low, max_score=high, status=status, q=needle
                    )
                    expected = scan.count("m1", wanted)
                    assert fast.count("m1", wanted, single_repeat=True) == expected, wanted
                    for offset in (0, 5, 60):
                        reference = scan.page("m1", wanted, offset=offset, limit=9)
                        total, page = fast.counted_page(
                            "m1", wanted, offset=offset, limit=9, single_repeat=True
                        )
                        assert total == expected, (wanted, offset)
                        assert [r.item_id for r in page] == [r.item_id for r in reference]
                    for queries in (fast, walking, grouping):
                        for descending in (False, True):
                            for offset in (0, 3, 40):
                                got, want = (
                                    q.ranked_items(
                                        "m1",
                                        wanted,
                                        scorer="s",
                                        descending=descending,
                                        offset=offset,
                                        limit=7,
                                        single_repeat=one,
                                    )
                                    for q, one in ((queries, True), (scan, False))
                                )
                                assert got[0] == want[0] == expected, wanted
                                assert [i for i, _ in got[1]] == [i for i, _ in want[1]], (
                                    wanted,
                                    descending,
                                    offset,
                                )
                    compared += expected > 0
        assert compared > len(RANGE_BOUNDS) * 4  # many of the combinations do match items


def test_a_counted_page_says_what_the_count_says(store_url: str) -> None:
    """``counted_page`` takes the total from a page that ends the matches: it must be the
    count whatever the page's place (first, last, short, past the end, exactly full)."""
    with open_store(store_url) as store:
        _mixed_run(store, "c1", n=60)
        q = store.run_queries
        for wanted in (ResultFilter(), ResultFilter(q="gamma"), ResultFilter(q="no such text")):
            count = q.count("c1", wanted)
            for offset in (0, 1, count - 1, count, count + 5, max(0, count - 10)):
                for limit in (1, 10, count or 1, 100):
                    if offset < 0:
                        continue
                    total, page = q.counted_page("c1", wanted, offset=offset, limit=limit)
                    assert total == count, (wanted, offset, limit)
                    assert page == q.page("c1", wanted, offset=offset, limit=limit)


def test_text_copy_item_id_migration_backfills_and_downgrades(store_url: str) -> None:
    """0012 (PostgreSQL) gives the text copy each result's item id: filled for results
    stored before it, written by the replaced trigger after; its downgrade drops the
    column and the trigger writes rows without it again. SQLite has no copy: a no-op."""
    import sqlalchemy as sa
    from alembic import command

    from assay.store.engine import _alembic_config
    from assay.store.run_queries import RunQueries

    with open_store(store_url) as store:
        postgres = store.engine.dialect.name == "postgresql"
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), "0011")
        _mixed_run(store, "before", n=40)  # written by 0010's trigger
        if postgres:
            columns = {c["name"] for c in sa.inspect(store.engine).get_columns("item_results_text")}
            assert "item_id" not in columns
            with store.engine.connect() as conn:
                copied = conn.exec_driver_sql(
                    "SELECT count(*) FROM item_results_text WHERE run_id = 'before'"
                ).scalar_one()
            assert copied == 40
        with store.engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), "head")
        _mixed_run(store, "after", n=40)  # written by 0012's trigger
        if postgres:
            with store.engine.connect() as conn:
                mismatched = conn.exec_driver_sql(
                    "SELECT count(*) FROM item_results_text x JOIN item_results t ON t.id = x.id"
                    " WHERE x.item_id IS DISTINCT FROM t.item_id"
                ).scalar_one()
                rows = conn.exec_driver_sql("SELECT count(*) FROM item_results_text").scalar_one()
            assert (mismatched, rows) == (0, 80)
        else:
            assert "item_results_text" not in sa.inspect(store.engine).get_table_names()
        scan = RunQueries(store._db, text_index=False)
        for run_id in ("before", "after"):
            for needle in ("gamma", "école", "alpha"):
                wanted = ResultFilter(scorer="s", min_score=0.2, max_score=0.7, q=needle)
                count = store.run_queries.count(run_id, wanted, single_repeat=True)
                assert count == scan.count(run_id, wanted) > 0, (run_id, needle)
