"""End to end in a real headless Chromium: upload a dataset, launch a run with two scorers
whose forms come from the JSON Schemas (a bad value shows its inline error), watch the run
finish through the SSE progress, drill into an item, annotate it, compare two runs; and
launch a prompt optimization from its form, watching its page update live to the end.

Debian's ``chromium`` is driven by Playwright's Python package (``executable_path``; no
``playwright install``). It is not optional: without chromium this test fails, and CI
(``.ci/run``) installs it. Screenshots of every step go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from playwright.sync_api import Page, expect, sync_playwright

from assay.server.app import create_app
from assay.testing.openai_server import MockOpenAIServer
from tests.server.optimize_mock import TERSE_RULE, responder, rows

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "server" / "web_ui_questions.jsonl"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
TIMEOUT_MS = 20_000
MOCK_LATENCY_S = 0.5
"""Per target call; with concurrency 1 the six items take ~3 s, long enough to see the
live progress before the run finishes."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _capital_answer(body: dict[str, Any]) -> str:
    """The mock target model: answers each capital question, Italy right this time."""
    prompt = str(body["messages"][-1]["content"])
    answers = {
        "France": "Paris.",
        "Spain": "Madrid.",
        "Italy": "Rome.",
        "Germany": "Bonn, I believe.",
        "Japan": "Tokyo.",
        "Peru": "Lima.",
    }
    return next((a for country, a in answers.items() if country in prompt), "no idea")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The real app (``create_app``) under uvicorn on a free loopback port."""
    app = create_app(store_url=str(tmp_path / "e2e.db"), data_dir=tmp_path / "data")
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, name="uvicorn-e2e", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the assay server did not start within 20 s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(20)


@pytest.fixture
def page() -> Iterator[Page]:
    assert CHROMIUM.exists(), (
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; "
        ".ci/run does it) — this test must not be skipped"
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        # console errors too (an invalid ``pattern`` regex is one), but not the browser's
        # "Failed to load resource" line for a 4xx a flow expects
        tab.on(
            "console",
            lambda message: (
                errors.append(message.text)
                if message.type == "error"
                and not message.text.startswith("Failed to load resource")
                else None
            ),
        )
        yield tab
        browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _wait_finished(base: str, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        record: dict[str, Any] = httpx.get(f"{base}/api/runs/{run_id}").json()
        if record["status"] not in ("pending", "running"):
            return record
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish within 30 s")


def test_upload_launch_watch_drill_down_annotate_compare(server: str, page: Page) -> None:
    base = server
    mock = MockOpenAIServer(latency_s=MOCK_LATENCY_S, responder=_capital_answer).start()
    try:
        _scenario(base, page, mock.base_url)
    finally:
        mock.stop()


def _scenario(base: str, page: Page, mock_url: str) -> None:
    # 1. upload the dataset
    page.goto(f"{base}/datasets")
    page.fill("#upload-name", "capitals")
    page.fill("#upload-description", "capital cities")
    page.set_input_files("#upload-file", str(FIXTURE))
    _shot(page, "01-upload-form")
    page.click("#upload-submit")
    page.wait_for_url(f"{base}/datasets/capitals")
    expect(page.get_by_test_id("dataset-items")).to_contain_text("What is the capital of Peru?")
    # user text is shown, not executed
    expect(page.get_by_test_id("dataset-items")).to_contain_text("<script>alert('x')</script>")
    _shot(page, "02-dataset")

    # 2. the launcher: two scorers with generated forms
    page.click('[data-testid="run-this-dataset"]')
    page.wait_for_url(re.compile(r"/runs/new\?dataset=capitals$"))
    expect(page.locator("#scorer-picker")).to_have_attribute("data-loaded", "true")
    page.select_option("#scorer-picker", "content-similarity")
    page.click("#add-scorer")
    page.select_option("#scorer-picker", "check-includes")
    page.click("#add-scorer")
    similarity = page.get_by_test_id("scorer-content-similarity")
    includes = page.get_by_test_id("scorer-check-includes")
    # content-similarity's enum param became a select with its default chosen
    expect(similarity.locator('.field[data-param="compare_to"] select')).to_have_value('"auto"')
    expect(includes.locator('.field[data-param="ignore_case"] input')).to_be_checked()

    # a bad value (the required `expected` left empty) → the server's 422 names
    # scorers[1].params.expected and the form shows it next to that field
    page.click("#preview-button")
    expected_error = includes.locator('.field[data-param="expected"] .field-error')
    expect(expected_error).to_be_visible()
    expect(expected_error).not_to_be_empty()
    expect(includes.locator('.field[data-param="expected"] input')).to_have_class(
        re.compile("invalid")
    )
    expect(similarity.locator(".field-error:visible")).to_have_count(0)
    _shot(page, "03-inline-error")

    # fixed: the live preview scores the first three rows
    includes.locator('.field[data-param="expected"] input').fill("capital")
    page.click("#preview-button")
    expect(expected_error).to_be_hidden()
    preview = page.locator("#preview-table tbody tr")
    expect(preview).to_have_count(3)
    # rows france, spain, italy; check-includes "capital" → 1, 1, 0
    expect(page.locator("#preview-0-1")).to_have_text("1.000")
    expect(page.locator("#preview-1-1")).to_have_text("1.000")
    expect(page.locator("#preview-2-1")).to_have_text("0.000")
    _shot(page, "04-preview")

    # 3. start a run whose target is a (slow) mock model, and watch it live
    includes.locator('.field[data-param="expected"] input').fill("Paris")
    page.fill("#launch-name", "mock model")
    page.fill("#launch-concurrency", "1")
    target = {
        "type": "model",
        "model": "openai-compatible/mock",
        "base_url": mock_url,
        "prompt": "{{ input }}",
    }
    page.fill("#launch-target", json.dumps(target))
    page.click("#start-run")
    page.wait_for_url(re.compile(r"/runs/[0-9a-f]+$"))
    run_id = page.url.rsplit("/", 1)[1]
    # progress arrives over SSE while the run is still going (only SSE writes "n / 6";
    # the server-rendered text is "0 done"): some but not all items done
    expect(page.get_by_test_id("progress-text")).to_contain_text(re.compile(r"[1-5] / 6 done"))
    _shot(page, "05-run-progress")
    # on `finished` the page reloads with the stored summary
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=30_000)
    expect(page.get_by_test_id("summary-table")).to_contain_text("Check: includes")
    expect(page.get_by_test_id("items-count")).to_have_text("6 matching results")
    _shot(page, "06-run-finished")

    # filters: France is the only item whose output includes "Paris"
    page.select_option('#item-filters select[name="scorer"]', "check-includes")
    page.fill('#item-filters input[name="min_score"]', "1")
    page.click('#item-filters button[type="submit"]')
    expect(page.get_by_test_id("items-count")).to_have_text("1 matching result")
    expect(page.locator("tbody.item-group")).to_have_attribute("data-item-id", "france")

    # 4. drill down into the item
    page.click('[data-testid="item-link"]')
    page.wait_for_url(re.compile(rf"/runs/{run_id}/items/france$"))
    expect(page.get_by_test_id("item-input")).to_have_text("What is the capital of France?")
    expect(page.get_by_test_id("item-output")).to_have_text("Paris.")
    expect(page.get_by_test_id("item-scores")).to_contain_text("Content Similarity")
    _shot(page, "07-item")

    # 5. annotate it: pass + comment, shown in the history
    page.fill("#annotation-author", "reviewer-1")
    page.check("#annotation-pass")
    page.fill("#annotation-comment", "right answer, <b>terse</b>")
    page.click("#annotation-submit")
    history = page.locator("#annotation-history tbody tr")
    expect(history).to_have_count(1)
    expect(history.first).to_contain_text("reviewer-1")
    expect(history.first).to_contain_text("pass")
    expect(history.first).to_contain_text("right answer, <b>terse</b>")
    stored = httpx.get(f"{base}/api/runs/{run_id}/items/france/annotations").json()
    assert [(a["author"], a["label"], a["comment"]) for a in stored] == [
        ("reviewer-1", "pass", "right answer, <b>terse</b>")
    ]
    _shot(page, "08-annotated")

    # 6. a second run over the stored outputs, then compare the model run against it
    answer = httpx.post(
        f"{base}/api/runs",
        json={
            "dataset": "capitals",
            "name": "stored outputs",
            "scorers": [
                {"type": "content-similarity"},
                {"type": "check-includes", "params": {"expected": "Paris"}},
            ],
        },
    )
    assert answer.status_code == 201, answer.text
    baseline_id = answer.json()["run_id"]
    assert _wait_finished(base, baseline_id)["status"] == "completed"
    page.goto(f"{base}/runs/{run_id}/compare")
    page.select_option("#compare-baseline", baseline_id)
    page.click("#compare-submit")
    page.wait_for_url(re.compile(rf"/runs/{run_id}/compare\?baseline={baseline_id}"))
    expect(page.get_by_test_id("paired-stats")).to_contain_text("Content Similarity")
    comparison = page.get_by_test_id("comparison")
    rows = comparison.locator('[data-testid="compare-rows"] tbody tr')
    expect(rows.first).to_be_visible()
    # regressions first: every regressed row comes before every improved one
    classes = rows.evaluate_all("rows => rows.map(r => r.className)")
    assert "regressed" in classes and classes == sorted(classes, key=lambda c: c != "regressed")
    # germany got worse on content-similarity: its row comes first, with the output diff
    first = rows.first
    expect(first).to_have_attribute("data-item-id", "germany")
    expect(first).to_have_attribute("data-scorer", "content-similarity")
    expect(first.locator(".diff-del")).to_have_text("- Berlin.")
    expect(first.locator(".diff-add")).to_have_text("+ Bonn, I believe.")
    _shot(page, "09-compare")


def _store_dataset(base: str, name: str, items: list[dict[str, Any]]) -> None:
    assert httpx.post(f"{base}/api/datasets", json={"name": name}).status_code == 201
    lines = "".join(json.dumps(item) + "\n" for item in items).encode()
    imported = httpx.post(
        f"{base}/api/datasets/{name}/import", files={"file": (f"{name}.jsonl", lines)}
    )
    assert imported.status_code == 200, imported.text


def test_launch_an_optimization_and_watch_it_live(server: str, page: Page) -> None:
    """The optimization form → its page following the event stream → the finished page."""
    base = server
    mock = MockOpenAIServer(latency_s=0.3, responder=responder).start()
    try:
        _store_dataset(base, "arith-train", rows(6))
        _store_dataset(base, "arith-val", rows(4, start=10))
        _store_dataset(base, "arith-test", rows(6, start=20))
        _optimize_scenario(base, page, mock.base_url)
    finally:
        mock.stop()


def _optimize_scenario(base: str, page: Page, mock_url: str) -> None:
    page.goto(f"{base}/optimizations")
    page.click('[data-testid="new-optimization"]')
    page.wait_for_url(f"{base}/optimizations/new")
    page.fill("#opt-name", "arith <b>live</b>")
    page.select_option("#opt-train", "arith-train")
    page.select_option("#opt-val", "arith-val")
    page.select_option("#opt-test", "arith-test")
    page.fill("#opt-seed", "You solve arithmetic.")
    page.fill("#opt-task-base-url", mock_url)
    page.fill("#opt-reflection-model", "openai-compatible/reflect")
    page.fill("#opt-reflection-base-url", mock_url)
    page.fill("#opt-max-metric-calls", "40")
    page.fill("#opt-concurrency", "1")
    expect(page.locator("#scorer-picker")).to_have_attribute("data-loaded", "true")
    page.select_option("#scorer-picker", "exact-match")
    page.click("#add-scorer")
    page.select_option("#scorer-picker", "keyword-coverage")
    page.click("#add-scorer")

    # the task model left empty: the server's 422 names task_model, shown beside it
    page.click("#start-optimization")
    task_error = page.locator('[data-field="task_model"] .field-error')
    expect(task_error).to_be_visible()
    expect(page.locator("#opt-task-model")).to_have_class(re.compile("invalid"))
    _shot(page, "10-optimization-form-error")

    page.fill("#opt-task-model", "openai-compatible/task")
    page.click("#start-optimization")
    page.wait_for_url(re.compile(r"/optimizations/[0-9a-f]{32}$"))
    optimization_id = page.url.rsplit("/", 1)[1]

    # live: only the event stream writes the log; the lineage and status follow it
    log = page.get_by_test_id("opt-log")
    expect(log).to_contain_text("candidate 0 evaluated on val (4 rows)")
    expect(page.get_by_test_id("opt-progress")).to_contain_text("/40")
    _shot(page, "11-optimization-live")
    expect(log).to_contain_text(f"+{TERSE_RULE}")  # the proposal's diff, in-process
    expect(page.get_by_test_id("candidate-1")).to_contain_text("changed system")

    # finished: the page reloads once into the stored state
    expect(page.get_by_test_id("opt-status")).to_have_text("completed", timeout=60_000)
    expect(page.get_by_test_id("opt-summary")).to_contain_text("significant improvement")
    expect(page.get_by_test_id("best-prompt")).to_contain_text(TERSE_RULE)
    expect(page.locator('button.copy[data-copy-target="best-1"]')).to_be_visible()
    expect(page.locator('[data-testid="scoreboard"] tbody tr')).to_have_count(4 + 3)
    expect(page.get_by_test_id("diagnostics")).to_contain_text("Exact match")
    expect(page.locator("h1")).to_contain_text("arith <b>live</b>")  # escaped, shown as text
    _shot(page, "12-optimization-finished")
    page.click('button.copy[data-copy-target="best-1"]')
    expect(page.locator('button.copy[data-copy-target="best-1"]')).to_have_text(
        re.compile("Copied|Copy failed")
    )
    stored = httpx.get(f"{base}/api/optimizations/{optimization_id}").json()
    assert stored["status"] == "completed"
    assert TERSE_RULE in stored["result"]["best_candidate"]["system"]


def test_tag_rename_and_delete_a_run_and_a_dataset(server: str, page: Page) -> None:
    """Issue 25: a run is tagged and renamed from its page; deleting it (and a dataset)
    asks first, and a dismissed confirmation deletes nothing."""
    rows = [{"id": "q/1?#", "input": "x", "output": "x", "expected_output": "x"}]
    started = httpx.post(f"{server}/api/runs", json={"data": rows, "scorers": ["exact-match"]})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}")
    page.fill("[data-manage-tag]", "baseline")
    page.click("[data-manage-action=tag]")
    expect(page.get_by_test_id("run-tags")).to_contain_text("baseline")
    page.fill("[data-manage-name]", "nightly")
    page.click("[data-manage-action=rename]")
    expect(page.locator("h1")).to_contain_text("nightly")
    record = httpx.get(f"{server}/api/runs/{run_id}").json()
    assert record["info"]["name"] == "nightly" and record["info"]["tags"] == ["baseline"]
    _shot(page, "manage-run")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_test_id("delete-run").click()
    page.wait_for_timeout(300)
    assert httpx.get(f"{server}/api/runs/{run_id}").status_code == 200
    messages: list[str] = []

    def accept(dialog: Any) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_test_id("delete-run").click()
    page.wait_for_url(f"{server}/runs")
    assert "nightly" in messages[0]
    assert httpx.get(f"{server}/api/runs/{run_id}").status_code == 404
    _store_dataset(server, "scratch", rows)
    page.goto(f"{server}/datasets/scratch")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("delete-dataset").click()
    page.wait_for_url(f"{server}/datasets")
    assert httpx.get(f"{server}/api/datasets").json() == []


def test_review_queue_with_keyboard_and_a_transcript(server: str, page: Page) -> None:
    """Issue 25: a reviewer walks a run's queue with the keyboard (p/f, s, c, Ctrl+Enter
    saves and moves on, "unreviewed only" skips reviewed items); item ids with URL
    characters work; a trajectory item reads as a conversation with its tool calls."""
    trajectory = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "function": {"name": "lookup", "arguments": '{"q": "Oslo"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "-3 C"},
        {"role": "assistant", "content": "It is -3 C in Oslo."},
    ]
    rows = [
        {"id": "a/1", "input": "q1", "output": "x", "expected_output": "x"},
        {"id": "b?2#", "input": "q2", "output": "y", "expected_output": "x"},
        {
            "id": "c%3",
            "input": [{"role": "user", "content": "weather?"}],
            "output": trajectory,
            "expected_output": "x",
        },
    ]
    started = httpx.post(f"{server}/api/runs", json={"data": rows, "scorers": ["exact-match"]})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}")
    page.get_by_test_id("item-link").first.click()
    expect(page.get_by_test_id("queue-position")).to_have_text("item 1 of 3")
    expect(page.locator("h1")).to_contain_text("a/1")
    page.fill("#annotation-author", "rev")
    page.locator("body").click()
    page.keyboard.press("p")
    expect(page.locator("#annotation-pass")).to_be_checked()
    page.keyboard.press("c")
    page.keyboard.type("looks right")
    page.keyboard.press("Control+Enter")  # save and go to the next item
    expect(page.locator("h1")).to_contain_text("b?2#")
    expect(page.get_by_test_id("queue-progress")).to_have_text("1 of 3 reviewed")
    page.locator("body").click()
    page.keyboard.press("k")  # back to the reviewed item: its review is in the history
    expect(page.locator("h1")).to_contain_text("a/1")
    expect(page.get_by_test_id("annotation-history")).to_contain_text("looks right")
    page.get_by_test_id("queue-unreviewed").check()
    expect(page.get_by_test_id("queue-position")).to_contain_text("reviewed; 2 left")
    page.locator("body").click()
    page.keyboard.press("j")
    expect(page.locator("h1")).to_contain_text("b?2#")
    expect(page.get_by_test_id("queue-position")).to_have_text("item 1 of 2 unreviewed")
    page.locator("body").click()
    page.keyboard.press("f")
    page.get_by_test_id("save-next").click()
    expect(page.locator("h1")).to_contain_text("c%3")
    expect(page.get_by_test_id("queue-end")).to_be_visible()
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator("li")).to_have_count(4)
    expect(transcript.get_by_test_id("tool-call")).to_contain_text("lookup")
    expect(transcript).to_contain_text("It is -3 C in Oslo.")
    _shot(page, "review-queue-transcript")
    labels = httpx.get(f"{server}/api/runs/{run_id}/items/{'b%3F2%23'}/annotations").json()
    assert [a["label"] for a in labels] == ["fail"]


def test_compare_picker_filters_and_default_baseline(server: str, page: Page) -> None:
    """Issue 25: the compare page picks the latest run on the same dataset, its run picker
    searches, and its rows filter by change and by scorer."""
    scorers = ["exact-match", "textual-difference"]
    _store_dataset(
        server,
        "cmp",
        [{"id": f"i{k}", "input": "q", "output": "a", "expected_output": "a"} for k in range(3)],
    )
    first = httpx.post(
        f"{server}/api/runs", json={"dataset": "cmp", "scorers": scorers, "name": "first"}
    ).json()["run_id"]
    _wait_finished(server, first)
    second = httpx.post(
        f"{server}/api/runs",
        json={
            "dataset": "cmp",
            "scorers": scorers,
            "name": "second",
            "target": {
                "type": "model",
                "model": "openai/none",
                "prompt": "{{ input }}",
                "base_url": "http://127.0.0.1:9/v1",
            },
        },
    ).json()
    run_id = second["run_id"]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}/compare")
    expect(page.get_by_test_id("default-baseline")).to_contain_text(first[:12])
    page.get_by_test_id("compare-find").fill("zzz-no-such-run")
    assert page.locator("#compare-baseline option:not([hidden])").count() == 0
    page.get_by_test_id("compare-find").fill("first")
    assert page.locator("#compare-baseline option:not([hidden])").count() == 1
    rows = page.locator("[data-testid=compare-rows] tbody tr")
    total = rows.count()
    # the filters reload the page, filtered over the whole comparison on the server
    page.get_by_test_id("compare-filter-state").select_option("improved")
    page.wait_for_url(re.compile(r"[?&]state=improved"))
    assert rows.count() == 0 < total
    expect(page.get_by_test_id("compare-filter-state")).to_have_value("improved")
    # the second run failed on every item: no numbers, so every row counts as unchanged
    page.get_by_test_id("compare-filter-state").select_option("same")
    page.wait_for_url(re.compile(r"[?&]state=same"))
    assert rows.count() == total
    assert page.locator("[data-testid=compare-rows] tbody tr.same").count() == total
    page.get_by_test_id("compare-filter-state").select_option("")
    page.wait_for_url(re.compile(r"[?&]state=(&|$)"))
    assert rows.count() == total
    # each scorer's rows alone: half of them (two scorers, every item scored by both)
    scorer_of = "[data-testid=compare-rows] tbody tr[data-scorer]"
    assert sorted({row.get_attribute("data-scorer") for row in page.locator(scorer_of).all()}) == (
        sorted(scorers)
    )
    for scorer in scorers:
        page.get_by_test_id("compare-filter-scorer").select_option(scorer)
        page.wait_for_url(re.compile(rf"[?&]scorer={scorer}(&|$)"))
        expect(page.get_by_test_id("compare-filter-scorer")).to_have_value(scorer)
        assert rows.count() == total // 2 > 0
        assert {row.get_attribute("data-scorer") for row in page.locator(scorer_of).all()} == {
            scorer
        }
    # both filters at once: the scorer stays when the change is picked
    page.get_by_test_id("compare-filter-state").select_option("regressed")
    page.wait_for_url(re.compile(r"[?&]state=regressed"))
    expect(page.get_by_test_id("compare-filter-scorer")).to_have_value(scorers[-1])
    assert rows.count() == 0
    page.get_by_test_id("compare-filter-scorer").select_option("")
    page.wait_for_url(re.compile(r"[?&]scorer=&state=regressed"))
    page.get_by_test_id("compare-filter-state").select_option("")
    page.wait_for_url(re.compile(r"[?&]scorer=&state=(&|$)"))
    assert rows.count() == total
