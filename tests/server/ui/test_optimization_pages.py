"""The optimization pages over a real store: an optimization arranged through the
repository whose evaluations point at real stored runs (for the diagnostics)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from assay.optimize import optimize
from assay.store import Store
from assay.store.optimizations_repo import CandidateRecord
from assay.testing import ScriptedModel
from tests.optimize.conftest import arithmetic_rows, reflection_reply, task_reply, write_jsonl

EVIL = "<script>alert('x')</script>"


def _candidate(idx: int, parents: list[int], score: float | None, text: str) -> CandidateRecord:
    return CandidateRecord(
        idx=idx,
        candidate_hash=f"h{idx}",
        components={"system": text},
        parents=parents,
        changed=["system"] if parents else [],
        iteration=idx,
        val_score=score,
        created_at=float(idx),
    )


def _arrange(store: Store, run_id: str | None) -> str:
    repo = store.optimizations
    repo.create("opt-1", name=f"name {EVIL}", config={"seed": 1}, run_dir="r")
    repo.put_candidate("opt-1", _candidate(0, [], 0.2, "Seed prompt."))
    repo.put_candidate("opt-1", _candidate(1, [0], 0.6, f"Better {EVIL}"))
    repo.put_candidate("opt-1", _candidate(2, [1], 0.4, "Worse child."))
    repo.put_candidate("opt-1", _candidate(3, [0, 1], None, "Merge, unscored."))
    repo.add_evaluation(
        "opt-1", run_id=run_id, candidate_hash="h1", split="val", iteration=1,
        metric_calls=3, mean_score=0.6, cost_usd=0.01,
    )  # fmt: skip
    return "opt-1"


def test_list_links_each_optimization(client: TestClient, store: Store) -> None:
    assert "No optimizations stored yet" in client.get("/optimizations").text
    _arrange(store, run_id=None)
    page = client.get("/optimizations").text
    assert 'href="/optimizations/opt-1"' in page
    assert EVIL not in page and "&lt;script&gt;" in page
    assert 'href="/optimizations"' in page  # the navigation links here


def test_detail_renders_lineage_trend_best_and_diagnostics(
    client: TestClient, store: Store, runs: dict[str, str]
) -> None:
    _arrange(store, runs["good"])
    response = client.get("/optimizations/opt-1")
    assert response.status_code == 200
    page = response.text
    # lineage: 1 under 0, 2 under 1; the merge 3 sits under 0 and names its other parent
    lineage = page[page.index('data-testid="lineage"') :]
    assert re.search(
        r'candidate-0".*?<ul class="lineage">\s*<li data-testid="candidate-1"', lineage, re.S
    )
    assert re.search(
        r'candidate-1".*?<ul class="lineage">\s*<li data-testid="candidate-2"', lineage, re.S
    )
    assert "also from 1" in lineage
    # trend: one dot per scored candidate (3 of 4), best-so-far line 0.2 → 0.6 → 0.6
    trend = page[page.index('data-testid="score-trend"') : page.index("</svg>")]
    assert trend.count("<circle") == 3
    assert "candidate 2: 0.4" in trend
    # best prompt is candidate 1's, escaped, with a copy button
    best = page[page.index('data-testid="best-prompt"') :]
    assert best.startswith('data-testid="best-prompt">Better &lt;script&gt;')
    assert 'data-copy-target="best-1"' in page
    assert EVIL not in page
    # diagnostics from the stored run: check-includes Paris fails on q2 (both repeats),
    # passes on q1; the judge's 0.5 is below the 0.9 feedback threshold on all 4
    rows = re.findall(
        r"<tr><td>([^<]+)</td><td>(\d+)</td><td>(\d+)</td>", page[page.index('"diagnostics"') :]
    )
    assert sorted((int(total), int(failed)) for _, total, failed in rows) == [(4, 2), (4, 4)]
    assert "below the feedback threshold, no reason given" in page


def test_unknown_optimization_page_is_404(client: TestClient) -> None:
    response = client.get("/optimizations/nope")
    assert response.status_code == 404
    assert "nope" in response.text


def test_running_optimization_page_is_live(client: TestClient, store: Store) -> None:
    repo = store.optimizations
    repo.create("opt-live", name="live", config={"budget": {"max_metric_calls": 40}}, run_dir="r")
    repo.update("opt-live", progress={"metric_calls": 7, "iterations": 1, "cost_usd": 0.0})
    page = client.get("/optimizations/opt-live").text
    assert 'id="opt-live" data-live="true" data-optimization-id="opt-live"' in page
    assert 'id="opt-cancel"' in page and 'id="opt-log"' in page
    assert "iteration 1 · metric calls 7/40 · cost $0.0000 · best val —" in page
    repo.update("opt-live", status="interrupted", error="stopped")
    stopped = client.get("/optimizations/opt-live").text
    assert 'data-live="false"' in stopped and 'id="opt-resume"' in stopped
    assert 'id="opt-cancel"' not in stopped


def test_finished_optimization_shows_status_scoreboard_and_trend(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    val = arithmetic_rows(4, start=10)
    val[0]["input"] += f" {EVIL}"
    result = optimize(
        {
            "candidate": {"instructions": "You solve arithmetic."},
            "train": write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(6)),
            "val": write_jsonl(tmp_path / "val.jsonl", val),
            "scorers": [{"type": "exact-match"}, {"type": "keyword-coverage"}],
            "budget": {"max_metric_calls": 40},
            "run_dir": str(tmp_path / "gepa"),
        },
        task_model=ScriptedModel(responder=task_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
    )
    page = client.get(f"/optimizations/{result.optimization_id}").text
    assert 'data-live="false"' in page and 'id="opt-cancel"' not in page
    assert f"metric calls {result.metric_calls}/40" in page
    assert "best val 1.000 (seed 0.500)" in page
    assert result.summary.split(";")[0] in page  # the one-sentence verdict
    start = page.index('data-testid="scoreboard"')
    board = page[start : page.index("</table>", start)]
    header = board[: board.index("</thead>")]
    assert re.findall(r"<th>([^<]+)</th>", header)[-2:] == ["Exact match", "Keyword Coverage"]
    val_rows = re.findall(r"<tr><td>val</td><td><code>(q\d+)</code>", board)
    assert val_rows == ["q10", "q11", "q12", "q13"]
    assert EVIL not in page and "&lt;script&gt;alert" in board
    svg = client.get(f"/optimizations/{result.optimization_id}/trend.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.count("<circle") == 2


def test_the_launch_form_lists_datasets_escaped(client: TestClient, store: Store) -> None:
    store.datasets.create(f"set {EVIL}")
    page = client.get("/optimizations/new").text
    assert 'id="optimize-form"' in page and 'id="scorer-picker"' in page
    assert 'name="budget.max_metric_calls"' in page and 'data-field="candidate"' in page
    assert EVIL not in page and "set &lt;script&gt;" in page
    assert 'href="/optimizations/new"' in client.get("/optimizations").text
