"""The demo from Python: every row scored by every text scorer, the tool row by tool accuracy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from assay.operations.demo import DEMO_SCORERS, default_demo_path, load_jsonl, run_demo


def test_demo_scores_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the run goes to ./.assay/assay.db
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    report = asyncio.run(run_demo(judge=False))
    items = load_jsonl(default_demo_path())
    assert len(report.rows) == len(items) == 20
    for row in report.rows:
        for type_id, _ in DEMO_SCORERS:
            assert row.scores[type_id].status == "ready", (row.id, type_id)
    tool_rows = [row for row in report.rows if "tool-call-accuracy-code" in row.scores]
    assert [row.id for row in tool_rows] == ["weather-tool"]
    assert tool_rows[0].scores["tool-call-accuracy-code"].score == 1.0
    # an exact paraphrase scores higher than an off-topic answer
    by_id = {row.id: row for row in report.rows}
    off = by_id["off-topic"].scores["content-similarity"].score
    close = by_id["shipping-time"].scores["content-similarity"].score
    assert off is not None and close is not None and close > off
    mean = report.mean("tone")
    assert mean is not None and 0.0 <= mean <= 1.0
    # the run is stored and its HTML report written
    from assay.store import open_store

    with open_store() as store:
        record = store.runs.get(report.run_id or "")
        assert record.status == "completed" and record.completed_results == 20
        stored = {r.item_id: r for r in store.runs.results(record.id)}
        assert stored["weather-tool"].scores["tool-call-accuracy-code"].score == 1.0
    assert report.report_path is not None
    html = (tmp_path / report.report_path).read_text(encoding="utf-8")
    assert report.run_id in html and "weather-tool" in html


def test_demo_judge_runs_on_the_embedded_smoke_test_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the model cache goes to ./.assay/assay.db
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    report = asyncio.run(run_demo(judge=True))
    judged = {row.id: row.scores["toxicity"] for row in report.rows if "toxicity" in row.scores}
    assert set(judged) == {"capital-fr", "tone-angry", "tone-kind", "off-topic"}
    for result in judged.values():
        assert result.judge_calls, "the judge was called"
        assert "smoke-test" in result.judge_calls[0].model_id
    assert any("smoke-test" in note for note in report.notes)
    assert (tmp_path / ".assay" / "assay.db").exists()
    assert any("4 misses" in note for note in report.notes)
    again = asyncio.run(run_demo(judge=True))
    assert any("4 hits, 0 misses" in note for note in again.notes)
    for row in again.rows:
        if "toxicity" in row.scores:
            assert row.scores["toxicity"].judge_calls[0].cached
