"""Issue 25, in a real headless Chromium: managing datasets the way a reviewer does it.

A dataset whose name has URL characters (``/``, ``?``, ``#``, a space) is uploaded through
the form, followed through every link, uploaded to again (the page asks first; saying no
stores nothing), renamed and launched from; a failed upload leaves nothing behind; the
launcher says a refused target's error once; the review queue's ``s`` shortcut scores.
No page may log a console error (an invalid ``pattern`` regex is one): the shared
``page`` fixture fails the test on any.

The server, browser and helpers are those of ``test_e2e_browser`` (never skipped).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx
from playwright.sync_api import Page, expect

from tests.server import test_e2e_browser as browser
from tests.server.test_e2e_browser import _shot, _wait_finished

server = browser.server
page = browser.page

NAME = "team/q?1 #x"
ROWS = b'{"id": "a/1", "input": "q1", "output": "x", "expected_output": "x"}\n'
MORE = b'{"id": "b?2", "input": "q2", "output": "y", "expected_output": "x"}\n'


def _upload(page: Page, name: str, body: bytes, description: str = "") -> None:
    page.fill("#upload-name", name)
    page.fill("#upload-description", description)
    page.set_input_files(
        "#upload-file", {"name": "rows.jsonl", "mimeType": "application/json", "buffer": body}
    )
    page.click("#upload-submit")


def _versions(base: str, name: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{base}/api/datasets/{quote(name, safe='')}/versions")
    assert answer.status_code == 200, answer.text
    versions: list[dict[str, Any]] = answer.json()
    return versions


def test_a_dataset_with_url_characters_uploaded_asked_renamed_and_launched(
    server: str, page: Page
) -> None:
    page.goto(f"{server}/datasets")
    _upload(page, NAME, ROWS, description="first upload")
    page.wait_for_url(f"{server}/datasets/{quote(NAME, safe='')}")
    expect(page.locator("h1")).to_have_text(f"Dataset {NAME}")
    expect(page.get_by_test_id("dataset-items")).to_contain_text("a/1")

    # the list links to it, and a second upload to the same name asks first
    page.goto(f"{server}/datasets")
    page.get_by_role("link", name=NAME).click()
    expect(page.locator("h1")).to_have_text(f"Dataset {NAME}")
    page.goto(f"{server}/datasets")
    asked: list[str] = []

    def refuse(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", refuse)
    _upload(page, NAME, MORE, description="second upload")
    expect(page.locator("#upload-error")).to_have_text(
        "Nothing uploaded: choose another name for a new dataset."
    )
    assert asked and f'Dataset "{NAME}" exists (version 1, 1 items)' in asked[0]
    assert [v["version"] for v in _versions(server, NAME)] == [0, 1]
    page.once("dialog", lambda dialog: dialog.accept())
    _upload(page, NAME, MORE, description="second upload")
    page.wait_for_url(f"{server}/datasets/{quote(NAME, safe='')}")
    assert [v["version"] for v in _versions(server, NAME)] == [0, 1, 2]
    expect(page.get_by_text("first upload")).to_be_visible()  # its description is kept

    # a failed upload to a new name leaves no dataset behind
    page.goto(f"{server}/datasets")
    _upload(page, "..", ROWS)
    expect(page.locator("#upload-error")).to_have_text(
        "dataset name '..' cannot be addressed in a URL: choose another"
    )
    _upload(page, "broken", ROWS + b"{not json\n", description="never")
    expect(page.locator("#upload-error")).to_contain_text("line 2")
    names = [d["name"] for d in httpx.get(f"{server}/api/datasets").json()]
    assert names == [NAME]

    # rename from its page: the page moves to the new name, runs follow
    page.goto(f"{server}/datasets/{quote(NAME, safe='')}")
    page.get_by_test_id("dataset-name").fill("..")
    page.click("[data-manage-action=rename]")
    expect(page.get_by_test_id("manage-error")).to_have_text(
        "dataset name '..' cannot be addressed in a URL: choose another"
    )
    renamed = "renamed/ds %2F"
    page.get_by_test_id("dataset-name").fill(renamed)
    page.click("[data-manage-action=rename]")
    page.wait_for_url(f"{server}/datasets/{quote(renamed, safe='')}")
    expect(page.locator("h1")).to_have_text(f"Dataset {renamed}")
    _shot(page, "dataset-renamed")

    # launch from it: a refused target says its error once, then the run starts
    page.get_by_test_id("run-this-dataset").click()
    expect(page.locator("#launch-dataset")).to_have_value(renamed)
    page.select_option("[data-testid=scorer-picker]", "exact-match")
    page.click("#add-scorer")
    page.fill("#launch-target", '{"type": "callable", "ref": "os:getcwd"}')
    page.click("#start-run")
    error = page.locator("#launch-error")
    expect(error).to_have_text(
        "target type 'callable' is not allowed here (allowed: model, scorer, stored-output); "
        "targets that import code run from the CLI"
    )
    page.fill("#launch-target", "")
    page.click("#start-run")
    page.wait_for_url(re.compile(r"/runs/[0-9a-f]{32}$"))
    run_id = page.url.rsplit("/", 1)[1]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}")
    page.get_by_role("link", name=renamed).click()
    expect(page.locator("h1")).to_have_text(f"Dataset {renamed}")


def test_the_score_shortcut_and_long_outputs_leave_id_and_score_columns_readable(
    server: str, page: Page
) -> None:
    """``s`` focuses the score field of the review form; long unbroken outputs do not
    squeeze the item and score columns of the items table."""
    long_output = "x" * 3000 + " " + "word " * 400
    rows = [
        {"id": f"item-{k}-with-a-longish-id", "input": "y" * 2000, "output": long_output}
        | {"expected_output": "z" * 2000}
        for k in range(3)
    ]
    scorers = ["exact-match", {"type": "check-includes", "params": {"expected": "word"}}]
    started = httpx.post(f"{server}/api/runs", json={"data": rows, "scorers": scorers})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    _wait_finished(server, run_id)
    page.goto(f"{server}/runs/{run_id}")
    link = page.get_by_test_id("item-link").first
    id_box = link.bounding_box()
    assert id_box is not None
    one_line = page.evaluate(
        "() => parseFloat(getComputedStyle("
        "document.querySelector('[data-testid=item-link] code')).lineHeight) || 18"
    )
    assert id_box["height"] <= 1.6 * one_line, f"the item id wraps: {id_box}"
    for cell in page.locator("td.score").all():
        box = cell.bounding_box()
        assert box is not None and box["width"] >= 60, f"a score column is squeezed: {box}"
    _shot(page, "long-outputs")
    page.goto(f"{server}/")
    run_link = page.locator("[data-testid=runs-table] td:first-child code").first
    run_box = run_link.bounding_box()
    assert run_box is not None and run_box["height"] <= 1.6 * one_line, (
        f"the run id wraps in the runs list: {run_box}"
    )
    page.goto(f"{server}/runs/{run_id}")

    link.click()
    page.fill("#annotation-author", "rev")
    page.locator("body").click()
    page.keyboard.press("s")
    expect(page.locator("#annotation-score")).to_be_focused()
    page.keyboard.type("0.75")
    page.keyboard.press("Control+Enter")
    expect(page.locator("h1")).to_contain_text("item-1-with-a-longish-id")
    stored = httpx.get(
        f"{server}/api/runs/{run_id}/items/item-0-with-a-longish-id/annotations"
    ).json()
    assert [a["score"] for a in stored] == [0.75]
