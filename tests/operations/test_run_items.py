"""``operations.run_items.export_lines``: the CSV read straight from the rows and the JSON
lines built without re-validation must write exactly what whole, validated results wrote
(issue 25), including awkward values; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.operations.run_items import _csv_lines, _export_row, export_lines
from assay.store import Store, open_store
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
from tests.store.conftest import postgres_schema_url

__all__ = ["postgres_schema_url"]

AWKWARD = [
    "plain",
    'comma, and "quotes"',
    "line one\nline two\r\nthree",
    "=SUM(A1:A9)",
    "",
    "ünïcödé ✓ 中文 \U0001f600",
    "tab\there",
    "nul \x00 and \uf8ff private",
]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An SQLite file, and a fresh PostgreSQL schema when the test server is named."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("postgres_schema_url")
    return url


def _results() -> list[ItemResult]:
    out = []
    for i in range(24):
        text = AWKWARD[i % len(AWKWARD)]
        scores: dict[str, ScoreResult] = {}
        error = None
        if i % 5 == 4:
            error = TargetError(message=f"boom, {text}\x1b[31m", kind="ValueError", traceback="tb")
        else:
            scores["judge"] = (
                ScoreResult(
                    scorer_id="judge",
                    scorer_label="Judge",
                    call_id=f"c{i}",
                    status="error",
                    error=ScoreError(message="judge down\nreally"),
                )
                if i % 7 == 3
                else ScoreResult(
                    scorer_id="judge",
                    scorer_label="Judge",
                    call_id=f"c{i}",
                    status="ready",
                    score=i / 7,
                    values={"precision": 0.5, "recall": 1 / 3},
                    reason=f"because {text}",
                    judge_calls=[
                        JudgeCall(
                            step="score",
                            status="success",
                            prompt="p",
                            model_id="m",
                            output={"score": 1},
                            usage=Usage(input_tokens=3, output_tokens=1, total_tokens=4),
                        )
                    ],
                )
            )
            if i % 3:
                scores["exact"] = ScoreResult(
                    scorer_id="exact",
                    scorer_label="Exact",
                    call_id=f"e{i}",
                    status="ready",
                    score=1.0,
                )
        out.append(
            ItemResult(
                item_id=f"id,{i}" if i % 4 == 0 else f"i{i}",
                repeat=i % 2,
                position=i // 2,
                input={"q": text, "n": [1, 2.5, None]} if i % 2 else text,
                output=None if error else text,
                expected_output=None if i % 6 == 0 else [text, i],
                error=error,
                latency_ms=None if i % 8 == 0 else 12.5 + i,
                scores=scores,
                warnings=["slow"] if i % 9 == 0 else [],
                usage=Usage(input_tokens=5, output_tokens=2, total_tokens=7)
                if i % 4 == 1
                else None,
                cost_usd=0.001 if i % 4 == 1 else None,
                started_at=1_700_000_000.25 + i,
                completed_at=1_700_000_001.5 + i,
            )
        )
    return out


def _store(store: Store) -> None:
    store.runs.create(
        RunInfo(
            id="run",
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=[ScorerSpec(id="judge", label="Judge"), ScorerSpec(id="exact", label="Exact")],
            repeats=2,
        )
    )
    store.runs.write_results("run", _results())


def _shout(text: str) -> str:
    return text.upper()


def _shouting(result: ItemResult) -> ItemResult:
    if result.error is None:
        return result
    return result.model_copy(
        update={"error": result.error.model_copy(update={"message": result.error.message.upper()})}
    )


def test_csv_from_rows_equals_csv_from_validated_results(store_url: str) -> None:
    with open_store(store_url) as store:
        _store(store)
        reference = "".join(
            _csv_lines(
                (_export_row(r, ["judge", "exact"]) for r in store.runs.results("run")),
                ["judge", "exact"],
            )
        )
        _, fast = export_lines("run", "csv", store=store)
        assert "".join(fast) == reference
        # a view that changes error messages: the same change given as ``error_text``
        _, slow = export_lines("run", "csv", store=store, view=_shouting)
        _, fast = export_lines("run", "csv", store=store, view=_shouting, error_text=_shout)
        changed = "".join(fast)
        assert changed == "".join(slow) != reference
        assert "BOOM, " in changed


def test_jsonl_without_revalidation_equals_validated_results(store_url: str) -> None:
    with open_store(store_url) as store:
        _store(store)
        _, pieces = export_lines("run", "jsonl", store=store)
        text = "".join(pieces)
        found = text.splitlines(keepends=True)
        validated = [r.model_dump_json() + "\n" for r in store.runs.results("run")]
        assert found == validated
        # the whole-result path (a view without ``json_view``) writes the same bytes
        _, slow = export_lines("run", "jsonl", store=store, view=lambda r: r)
        assert "".join(slow) == text
        # and the results as written (the store may order a result's scorers otherwise)
        written = {(r.item_id, r.repeat): r.model_dump(mode="json") for r in _results()}
        assert {(d["item_id"], d["repeat"]): d for d in map(json.loads, found)} == written


def test_export_streams_in_chunks(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.store.run_queries import RunQueries

    monkeypatch.setattr(RunQueries, "EXPORT_CHUNK", 5)  # 24 results: several chunks
    with open_store(store_url) as store:
        _store(store)
        reference = "".join(
            _csv_lines(
                (_export_row(r, ["judge", "exact"]) for r in store.runs.results("run")),
                ["judge", "exact"],
            )
        )
        _, fast = export_lines("run", "csv", store=store)
        assert "".join(fast) == reference
        # JSON lines too: each chunk's scores and judge calls stay with their results
        _, lines = export_lines("run", "jsonl", store=store)
        assert "".join(lines) == "".join(
            r.model_dump_json() + "\n" for r in store.runs.results("run")
        )


def test_an_export_left_early_leaves_no_reader_behind(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that hangs up mid-export: on PostgreSQL the next chunk was being read in
    a worker thread; closing the stream ends it and returns its connection."""
    import threading

    from assay.store.run_queries import RunQueries

    monkeypatch.setattr(RunQueries, "EXPORT_CHUNK", 5)
    with open_store(store_url) as store:
        _store(store)
        for rows in (
            store.run_queries.export_rows("run", ["judge", "exact"]),
            store.run_queries.export_dicts("run"),
        ):
            taken = [next(rows) for _ in range(7)]  # into the second chunk
            assert len(taken) == 7
            rows.close()  # type: ignore[attr-defined]
            assert not [t for t in threading.enumerate() if t.name.startswith("assay-export")]
            assert store.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_jsonl_client_view_on_dicts_equals_view_on_results(store_url: str) -> None:
    """The server's view (errors capped and neutralised, no tracebacks) applied to the fast
    path's dicts writes what it writes on whole results, hostile errors included."""
    from assay.server.client_view import result_dict_for_client, result_for_client

    with open_store(store_url) as store:
        _store(store)
        hostile = ItemResult(
            item_id="evil",
            position=99,
            error=TargetError(message="\x1b[2J\u202e" + "x" * 400, traceback="/srv/app.py"),
        )
        judged = ItemResult(
            item_id="judged",
            position=100,
            output="o",
            scores={
                "judge": ScoreResult(
                    scorer_id="judge",
                    scorer_label="Judge",
                    call_id="cj",
                    status="error",
                    error=ScoreError(message="HTTP 500: \x00\x07" + "y" * 500),
                    judge_calls=[
                        JudgeCall(
                            step="score",
                            status="failed",
                            prompt="p",
                            model_id="m",
                            error="\u2066 body " + "z" * 400,
                        )
                    ],
                )
            },
        )
        store.runs.write_results("run", [hostile, judged])
        _, slow = export_lines("run", "jsonl", store=store, view=result_for_client)
        _, fast = export_lines(
            "run", "jsonl", store=store, view=result_for_client, json_view=result_dict_for_client
        )
        text = "".join(fast)
        assert text == "".join(slow)
        assert "/srv/app.py" not in text and "\\u001b" not in text and "\u202e" not in text
        assert "more characters" in text
