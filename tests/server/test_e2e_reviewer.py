"""Issue 25, in a real headless Chromium: what a reviewer sees of a run while it goes and
after it stopped (items appearing as they finish, Cancel, Resume, "k of n" everywhere),
the runs list's sorting, columns and score trend, and the items table's tools.

The server, browser and helpers are those of ``test_e2e_browser`` (the same real app under
uvicorn on loopback, Debian's chromium through Playwright; never skipped).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from assay.testing.openai_server import MockOpenAIServer
from tests.server import test_e2e_browser as browser
from tests.server.test_e2e_browser import _shot, _store_dataset, _wait_finished

server = browser.server
page = browser.page

SLOW_ITEMS = 16
SLOW_LATENCY_S = 0.5
"""Per target call at concurrency 1: the run takes ~8 s, time to watch and cancel it even
on a loaded machine."""


def _answer(body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    return "yes" if int(prompt.rsplit(" ", 1)[1]) % 2 == 0 else "no"


def _count(text: str) -> int:
    match = re.match(r"(\d+) matching", text)
    assert match, text
    return int(match.group(1))


def test_items_appear_while_running_then_cancel_and_resume(server: str, page: Page) -> None:
    mock = MockOpenAIServer(latency_s=SLOW_LATENCY_S, responder=_answer).start()
    try:
        _store_dataset(
            server,
            "slow",
            [
                {"id": f"n{k}", "input": f"question {k}", "expected_output": "yes"}
                for k in range(SLOW_ITEMS)
            ],
        )
        target = {
            "type": "model",
            "model": "openai-compatible/mock",
            "base_url": mock.base_url,
            "prompt": "{{ input }}",
        }
        started = httpx.post(
            f"{server}/api/runs",
            json={
                "dataset": "slow",
                "name": "slow",
                "scorers": ["exact-match"],
                "target": target,
                "concurrency": 1,
            },
        )
        assert started.status_code == 201, started.text
        run_id = started.json()["run_id"]
        page.goto(f"{server}/runs/{run_id}")
        expect(page.get_by_test_id("cancel-run")).to_be_visible()
        first = _count(page.get_by_test_id("items-count").inner_text())
        assert first < SLOW_ITEMS
        # the table grows without a reload: stored items appear as they finish
        page.wait_for_function(
            "first => parseInt(document.querySelector('[data-testid=items-count]').textContent)"
            " > first",
            arg=first,
        )
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        # the count and the rows are read together (the next refresh may land any time)
        grown, shown = page.evaluate(
            "() => [parseInt(document.querySelector('[data-testid=items-count]').textContent),"
            " document.querySelectorAll('tbody.item-group').length]"
        )
        assert first < grown < SLOW_ITEMS and shown == grown
        _shot(page, "run-items-live")

        page.get_by_test_id("cancel-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("interrupted")
        record = httpx.get(f"{server}/api/runs/{run_id}").json()
        done = record["completed_results"]
        assert grown <= done < SLOW_ITEMS
        expect(page.get_by_test_id("partial-run")).to_contain_text(f"{done} of {SLOW_ITEMS}")
        expect(page.get_by_test_id("run-count")).to_have_text(f"{done} of {SLOW_ITEMS} results")
        expect(page.get_by_test_id("items-count")).to_have_text(f"{done} matching results")
        expect(page.get_by_test_id("cancel-run")).to_have_count(0)
        _shot(page, "run-cancelled")

        page.goto(f"{server}/")
        row = page.locator(f"tr[data-run-id='{run_id}']")
        expect(row.get_by_test_id("run-results")).to_have_text(f"{done} of {SLOW_ITEMS}")

        page.goto(f"{server}/runs/{run_id}")
        page.get_by_test_id("resume-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=30_000)
        expect(page.get_by_test_id("run-count")).to_have_text(
            f"{SLOW_ITEMS} of {SLOW_ITEMS} results"
        )
        expect(page.get_by_test_id("items-count")).to_have_text(f"{SLOW_ITEMS} matching results")
        expect(page.get_by_test_id("partial-run")).to_have_count(0)
        expect(page.get_by_test_id("resume-run")).to_have_count(0)
        assert _wait_finished(server, run_id)["completed_results"] == SLOW_ITEMS
    finally:
        mock.stop()


def test_a_finished_run_offers_neither_cancel_nor_resume(server: str, page: Page) -> None:
    rows = [{"id": "a", "input": "x", "output": "x", "expected_output": "x"}]
    started = httpx.post(f"{server}/api/runs", json={"data": rows, "scorers": ["exact-match"]})
    run_id = started.json()["run_id"]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}")
    expect(page.get_by_test_id("cancel-run")).to_have_count(0)
    expect(page.get_by_test_id("resume-run")).to_have_count(0)
    expect(page.get_by_test_id("run-count")).to_have_text("1 of 1 result")


def _run_dataset(base: str, dataset: str, name: str) -> str:
    started = httpx.post(
        f"{base}/api/runs", json={"dataset": dataset, "name": name, "scorers": ["exact-match"]}
    )
    assert started.status_code == 201, started.text
    run_id: str = started.json()["run_id"]
    assert _wait_finished(base, run_id)["status"] == "completed"
    return run_id


def _rows(outputs: list[str]) -> list[dict[str, Any]]:
    return [
        {"id": f"i{k}", "input": "q", "output": o, "expected_output": "a"}
        for k, o in enumerate(outputs)
    ]


def test_runs_list_sorts_and_shows_the_trend_of_a_dataset(server: str, page: Page) -> None:
    _store_dataset(server, "other", _rows(["a", "b"]))
    _run_dataset(server, "other", "other-run")
    _store_dataset(server, "qa", _rows(["a", "b", "b", "b"]))
    _run_dataset(server, "qa", "first")
    lines = "".join(json.dumps(r) + "\n" for r in _rows(["a", "a", "a", "b"])).encode()
    upsert = httpx.post(
        f"{server}/api/datasets/qa/import",
        files={"file": ("qa.jsonl", lines)},
        data={"upsert": "true"},
    )
    assert upsert.status_code == 200, upsert.text
    _run_dataset(server, "qa", "second")

    page.goto(f"{server}/")
    names = page.get_by_test_id("run-name")
    expect(names).to_have_text(["second", "first", "other-run"])
    page.get_by_test_id("sort-score").click()
    expect(names).to_have_text(["second", "other-run", "first"])  # 0.75, 0.5, 0.25
    expect(page.locator("th[aria-sort=descending]")).to_contain_text("Score")
    page.get_by_test_id("sort-score").click()
    expect(names).to_have_text(["first", "other-run", "second"])
    page.get_by_test_id("sort-name").click()
    expect(names).to_have_text(["first", "other-run", "second"])
    page.get_by_test_id("sort-name").click()
    expect(names).to_have_text(["second", "other-run", "first"])

    # the trend: the newest run's dataset by default, oldest run first
    trend = page.get_by_test_id("run-trend")
    expect(page.get_by_test_id("trend-data")).to_have_value("qa")
    expect(trend.locator("circle")).to_have_count(2)
    expect(trend.locator("circle title").first).to_contain_text("first")
    expect(trend.locator("circle title").last).to_contain_text("0.75")
    _shot(page, "runs-list-trend")
    page.get_by_test_id("trend-data").select_option("other")
    expect(page.get_by_test_id("trend-data")).to_have_value("other")
    expect(trend.locator("circle")).to_have_count(1)
    expect(trend.locator("circle title")).to_contain_text("other-run")
    expect(names).to_have_text(["second", "other-run", "first"])  # the sort is kept


def test_a_long_trend_title_wraps_above_the_chart(server: str, page: Page) -> None:
    """Issue 25: a long dataset name was cut with an ellipsis in the chart (SVG text does
    not wrap); the title is HTML now: whole, on several lines no wider than the chart."""
    name = "quarterly-customer-support-escalations-" * 4 + "final"
    _store_dataset(server, name, _rows(["a", "b"]))
    _run_dataset(server, name, "long")
    page.goto(f"{server}/")
    title = page.get_by_test_id("run-trend-title")
    expect(title).to_have_text(f"Exact match on {name} (higher is better)")
    box = title.bounding_box()
    chart = page.get_by_test_id("run-trend").bounding_box()
    assert box is not None and chart is not None
    line = float(title.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
    assert box["height"] >= 2 * line  # wrapped onto more lines
    assert box["x"] + box["width"] <= chart["x"] + chart["width"] + 1  # not past the chart
    assert title.evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing cut or hidden
    assert page.get_by_test_id("run-trend").locator("text", has_text="…").count() == 0
    _shot(page, "runs-list-long-trend-title")


def test_items_table_page_size_position_expected_bands_and_histograms(
    server: str, page: Page
) -> None:
    rows = [
        {
            "id": f"i{k:02d}",
            "input": f"q{k}",
            "output": "a" if k % 3 else "b",
            "expected_output": "a",
        }
        for k in range(60)
    ]
    _store_dataset(server, "sixty", rows)
    run_id = _run_dataset(server, "sixty", "sixty")
    page.goto(f"{server}/runs/{run_id}")
    expect(page.get_by_test_id("page-position")).to_have_text("page 1 of 2")
    expect(page.locator("tbody.item-group")).to_have_count(50)
    page.get_by_test_id("page-size").select_option("25")  # applies at once
    expect(page.get_by_test_id("page-position")).to_have_text("page 1 of 3")
    expect(page.locator("tbody.item-group")).to_have_count(25)
    page.get_by_test_id("next-page").click()
    expect(page.get_by_test_id("page-position")).to_have_text("page 2 of 3")
    expect(page.locator("tbody.item-group").first).to_have_attribute("data-item-id", "i25")
    page.get_by_test_id("next-page").click()
    expect(page.get_by_test_id("page-position")).to_have_text("page 3 of 3")
    expect(page.locator("tbody.item-group")).to_have_count(10)
    expect(page.get_by_test_id("next-page")).to_have_count(0)

    # expected output beside the output; i51 ("b", 51 % 3 == 0) fails exact-match
    item = page.locator("tbody[data-item-id=i51]")
    expect(item.get_by_test_id("item-expected")).to_have_text("a")
    cell = item.locator("td[data-band]")
    expect(cell).to_have_attribute("data-band", "bad")
    expect(cell).to_contain_text("▼")  # a mark, not only a colour
    expect(cell.locator(".visually-hidden")).to_have_text(" (poor)")
    colour = cell.evaluate("td => getComputedStyle(td).backgroundColor")
    good = page.locator("tbody[data-item-id=i52] td[data-band]")
    expect(good).to_contain_text("▲")
    assert colour != good.evaluate("td => getComputedStyle(td).backgroundColor")

    # the histogram loads after the page: 20 of the 60 scores at 0, 40 at 1
    histogram = page.get_by_test_id("score-histogram")
    expect(histogram).to_be_visible()
    expect(histogram.locator("rect.bar")).to_have_count(2)
    counts = histogram.locator("rect.bar").evaluate_all("bars => bars.map(b => b.dataset.count)")
    assert counts == ["20", "40"]
    _shot(page, "run-items-tools")
