"""NUL characters (which PostgreSQL refuses in text and JSONB) round-trip on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import assay
from assay.operations.datasets import import_file
from assay.operations.stored_runs import run_stored
from assay.store import Store
from assay.store.codec import NUL_ESCAPE

NUL = "\x00"


def test_a_run_with_nul_in_outputs_reasons_and_ids_keeps_every_result(store: Store) -> None:
    items = [{"id": f"i{n}", "input": f"q{n}", "expected_output": f"Q{n}"} for n in range(5)] + [
        {"id": f"nul{NUL}id", "input": f"a{NUL}b", "expected_output": f"A{NUL}B"}
    ]

    def target(input: str) -> str:
        return f"{input.upper()}{NUL}{NUL_ESCAPE}"

    reasoned = (
        assay.Scorer("nul-reason")
        .score(lambda ctx: 1.0)
        .reason(lambda ctx: f"because{NUL}of {ctx.output_text}")
    )
    run = run_stored(items, target, ["exact-match", reasoned], store=store, progress=False)
    record = store.runs.get(run.id)
    assert record.status == "completed"
    results = {r.item_id: r for r in store.runs.results(run.id)}
    assert len(results) == 6
    odd = results[f"nul{NUL}id"]
    assert odd.input == f"a{NUL}b" and odd.expected_output == f"A{NUL}B"
    assert odd.output == f"A{NUL}B{NUL}{NUL_ESCAPE}"
    assert odd.scores["nul-reason"].reason == f"because{NUL}of A{NUL}B{NUL}{NUL_ESCAPE}"
    assert results["i3"].output == f"Q3{NUL}{NUL_ESCAPE}"
    assert {k for k, _ in store.runs.completed_keys(run.id)} == set(results)


def test_importing_a_row_with_an_escaped_nul_round_trips(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "nul.jsonl"
    rows = [{"id": "a", "input": "x\u0000y", "metadata": {"k\u0000": ["v\u0000"]}}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    _, count = import_file(store, path, dataset="nul")
    assert count == 1
    (item,) = store.datasets.items("nul")
    assert item.input == "x\x00y" and item.metadata == {"k\x00": ["v\x00"]}


def test_lone_surrogates_in_outputs_reasons_and_ids_round_trip(store: Store) -> None:
    """A target whose decoding left a lone surrogate must not crash the writer (the run
    would stay interrupted and every resume crash again): it is stored reversibly."""
    lone = "\ud800"
    items = [{"id": f"i{n}", "input": f"q{n}"} for n in range(4)]

    def target(input: str) -> str:
        return f"{input}{lone}\udfff{NUL_ESCAPE}u d800"

    reasoned = (
        assay.Scorer("surrogate-reason")
        .score(lambda ctx: 1.0)
        .reason(lambda ctx: f"why{lone}: {ctx.output_text}")
    )
    run = run_stored(items, target, [reasoned], store=store, progress=False)
    assert store.runs.get(run.id).status == "completed"
    results = {r.item_id: r for r in store.runs.results(run.id)}
    odd = results["i3"]
    assert odd.output == f"q3{lone}\udfff{NUL_ESCAPE}u d800"
    assert odd.scores["surrogate-reason"].reason == f"why{lone}: {odd.output}"
    assert results["i1"].output == f"q1{lone}\udfff{NUL_ESCAPE}u d800"


def test_escaped_text_that_looks_like_a_surrogate_escape_stays_as_written() -> None:
    from assay.store.codec import dumps, escape_nul, loads, unescape_nul

    for text in [f"{NUL_ESCAPE}ud800", "x\ud800y\x00", f"{NUL_ESCAPE}u12", "\udc80" * 3]:
        assert unescape_nul(escape_nul(text)) == text
        assert loads(dumps({"k": [text]})) == {"k": [text]}
