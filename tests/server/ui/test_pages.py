"""The HTML pages against a real SQLite store: what a person sees must be what is stored,
and user text must never become markup."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from assay.operations.annotations import AnnotationInput, annotate
from assay.operations.stored_runs import run_stored
from assay.server.run_compare import compare_statistics
from assay.server.ui.pages import PREVIEW_CHARS
from assay.store import Certificate, Store
from assay.types import RunInfo, TargetSpec

from .conftest import _includes


def test_static_assets_are_served_from_the_package(client: TestClient) -> None:
    js = client.get("/static/app.js")
    css = client.get("/static/app.css")
    assert js.status_code == 200 and "EventSource" in js.text
    assert css.status_code == 200 and "font" in css.text
    page = client.get("/")
    # nothing is loaded from another host: every src/href is a local path
    assert not re.search(r'(src|href)="(https?:)?//', page.text)


def test_runs_list_links_every_stored_run(client: TestClient, runs: dict[str, str]) -> None:
    page = client.get("/")
    assert page.status_code == 200
    for run_id in runs.values():
        assert f'href="/runs/{run_id}"' in page.text
    assert "good" in page.text and "bad" in page.text


def test_empty_store_pages_render(client: TestClient) -> None:
    for path in ("/", "/datasets", "/runs/new", "/calibrations"):
        page = client.get(path)
        assert page.status_code == 200, path
    assert "No runs stored yet" in client.get("/").text
    assert "No calibration certificates" in client.get("/calibrations").text


def test_run_page_shows_summary_repeats_and_errors(
    client: TestClient, runs: dict[str, str]
) -> None:
    page = client.get(f"/runs/{runs['good']}")
    assert page.status_code == 200
    html = page.text
    # every item once, each with its two repeats grouped in one <tbody>
    groups = re.findall(r'<tbody class="item-group([^"]*)" data-item-id="([^"]+)">', html)
    assert [item for _, item in groups] == ["q1", "q2", "boom"]
    assert [("has-error" in cls) for cls, _ in groups] == [False, False, True]
    q1 = html.split('data-item-id="q1"')[1].split("</tbody>")[0]
    assert q1.count("<tr>") == 2
    assert "RuntimeError: target blew up on purpose" in html
    assert "judge-half" in html and "Check: includes" in html
    # the summary's mean for check-includes: q1 passes (1.0), q2 fails (0.0) → 0.500
    summary = html.split('data-testid="summary-table"')[1].split("</table>")[0]
    assert "0.500" in summary
    assert 'data-live="false"' in html


def test_run_page_filters(client: TestClient, runs: dict[str, str]) -> None:
    url = f"/runs/{runs['good']}"

    def items(**params: str) -> list[str]:
        html = client.get(url, params=params).text
        return re.findall(r'<tbody class="item-group[^"]*" data-item-id="([^"]+)">', html)

    assert items(errors_only="1") == ["boom"]
    # any scorer: q1 and q2 both have judge-half 0.5
    assert items(min_score="0.5") == ["q1", "q2"]
    assert items(scorer="check-includes", min_score="0.5") == ["q1"]
    assert items(scorer="check-includes", max_score="0.5") == ["q2"]
    assert items(q="spain") == ["q2"]
    assert items(q="PWNED") == ["q1"]
    # ranked by the first scorer (check-includes) by default; unscored items last
    assert items(sort="score_asc") == ["q2", "q1", "boom"]
    assert items(sort="score_desc") == ["q1", "q2", "boom"]
    assert items(sort="score_desc", scorer="judge-half", min_score="0.5") == ["q1", "q2"]
    # ranking from the flat score rows (no filter) and from the filtered results agree
    for scorer in ("check-includes", "judge-half"):
        assert items(sort="score_asc", scorer=scorer) == items(
            sort="score_asc", scorer=scorer, min_score="0"
        )
    html = client.get(url, params={"scorer": "check-includes", "max_score": "0.5"}).text
    # both repeats of q2 matched and are grouped; results are counted
    assert '<p data-testid="items-count">2 matching results</p>' in html
    ranked = client.get(url, params={"sort": "score_asc"}).text
    assert "3 matching items, ranked by check-includes" in ranked


def test_run_page_pages_through_results(client: TestClient, store: Store) -> None:
    many = [{"id": f"i{n:03d}", "input": f"q{n}", "output": f"a{n}"} for n in range(120)]
    run = run_stored(many, None, [_includes("a1")], store=store)
    url = f"/runs/{run.id}"
    seen: list[str] = []
    offset: str | None = "0"
    while offset is not None:
        html = client.get(url, params={"offset": offset}).text
        seen += re.findall(r'data-item-id="([^"]+)"', html)
        found = re.search(r'offset=(\d+)" data-testid="next-page"', html)
        offset = found.group(1) if found else None
    assert seen == [item["id"] for item in many]


def test_run_page_cells_hold_a_preview_the_item_page_the_whole_text(
    client: TestClient, store: Store
) -> None:
    """A long output is cut in the table (its cell shows five lines; the rest would be
    parsed and laid out unseen), whole on the item page; the cut never splits an escape."""
    long_output = "<b>" + "x" * (PREVIEW_CHARS - 4) + "&" + "TAIL" * 500
    items = [
        {"id": "long", "input": "q", "output": long_output},
        {"id": "short", "input": "q", "output": "fits"},
    ]
    run = run_stored(items, None, [_includes("x")], store=store)
    page = client.get(f"/runs/{run.id}").text
    cell = re.search(r'data-item-id="long">.*?</tbody>', page, re.S)
    assert cell is not None
    shown = re.findall(r'<pre class="clip">(.*?)</pre>', cell.group(0), re.S)[-1]
    assert html.unescape(shown) == long_output[:PREVIEW_CHARS] + " …"
    assert "TAIL" not in cell.group(0) and "<b>" not in cell.group(0)
    assert '<pre class="clip">fits</pre>' in page
    item = client.get(f"/runs/{run.id}/items/long").text
    assert html.escape(long_output, quote=False) in item or long_output in html.unescape(item)
    assert item.count("TAIL") >= 500


def test_run_page_bad_filter_names_the_field(client: TestClient, runs: dict[str, str]) -> None:
    page = client.get(f"/runs/{runs['good']}", params={"min_score": "high"})
    assert page.status_code == 422
    assert "min_score must be a number" in page.text
    page = client.get(f"/runs/{runs['good']}", params={"scorer": "nope"})
    assert page.status_code == 422 and "&#39;nope&#39;" in page.text


def test_unknown_run_is_a_404_page(client: TestClient, runs: dict[str, str]) -> None:
    page = client.get("/runs/does-not-exist")
    assert page.status_code == 404
    assert "does-not-exist" in page.text


def test_user_text_is_escaped(client: TestClient, runs: dict[str, str]) -> None:
    for path in (f"/runs/{runs['good']}", f"/runs/{runs['good']}/items/q1"):
        html = client.get(path).text
        assert "<script>alert" not in html, path
        assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html, path
    compare = client.get(f"/runs/{runs['good']}/compare", params={"baseline": runs["bad"]}).text
    assert "<script>alert" not in compare and "&lt;script&gt;" in compare


def test_item_page_shows_scores_judge_prompts_and_raw_answers(
    client: TestClient, runs: dict[str, str]
) -> None:
    page = client.get(f"/runs/{runs['good']}/items/q1")
    assert page.status_code == 200
    html = page.text
    assert "Capital of France?" in html and "Paris" in html
    assert html.count('data-testid="judge-call"') == 2  # one judge call per repeat
    assert "JUDGE PROMPT for &lt;script&gt;" in html
    assert "{&#34;score&#34;: 0.5}" in html  # the judge's raw answer
    assert "scripted-judge" in html
    assert 'data-repeat="0"' in html and 'data-repeat="1"' in html
    assert 'id="annotation-form"' in html and 'data-item-id="q1"' in html


def test_item_page_of_a_failed_item_shows_the_error(
    client: TestClient, runs: dict[str, str]
) -> None:
    html = client.get(f"/runs/{runs['good']}/items/boom").text
    assert "RuntimeError: target blew up on purpose" in html
    # the traceback is stored, but the page shows the message only
    assert "Traceback (most recent call last)" not in html


def test_item_not_in_run_is_a_404(client: TestClient, runs: dict[str, str]) -> None:
    page = client.get(f"/runs/{runs['good']}/items/nope")
    assert page.status_code == 404 and "&#39;nope&#39;" in page.text


def _compare_rows(html: str) -> list[tuple[str, str, str]]:
    return re.findall(
        r'<tr class="(regressed|improved|same)" data-item-id="([^"]+)" data-scorer="([^"]+)">',
        html,
    )


def test_compare_page_lists_regressions_first_with_diff_and_statistics(
    client: TestClient, runs: dict[str, str], store: Store
) -> None:
    # "bad" against baseline "good": q1's check-includes regressed (1 → 0)
    html = client.get(f"/runs/{runs['bad']}/compare", params={"baseline": runs["good"]}).text
    rows = _compare_rows(html)
    assert rows[0] == ("regressed", "q1", "check-includes")
    assert [state for state, _, _ in rows[1:]] == ["same"] * (len(rows) - 1)
    assert '<span class="diff-del">- &lt;script&gt;' in html
    assert '<span class="diff-add">+ I do not know</span>' in html
    assert html.count('data-testid="diff"') == 2  # one diff per item (q1, q2), not per row
    # rows at once; app.js loads the statistics from the API into the placeholder
    assert 'data-testid="paired-stats"' not in html
    url = html.split('<div id="compare-statistics" data-url="')[1].split('"')[0]
    assert url == (
        f"/api/runs/{runs['bad']}/compare/statistics?baseline={runs['good']}&runs=&item_lists=false"
    )
    [statistics] = compare_statistics(runs["good"], [runs["bad"]], store=store)
    [check] = [s for s in statistics.scorers if s.scorer_id == "check-includes"]
    assert (check.scorer_label, check.delta) == ("Check: includes", -0.5)
    # computed once, the page renders them itself
    html = client.get(f"/runs/{runs['bad']}/compare", params={"baseline": runs["good"]}).text
    assert 'id="compare-statistics"' not in html
    stats = html.split('data-testid="paired-stats"')[1].split("</table>")[0]
    assert "Check: includes" in stats and "-0.500" in stats
    # the other direction: q1 improved, and improvements come last
    html = client.get(f"/runs/{runs['good']}/compare", params={"baseline": runs["bad"]}).text
    rows = _compare_rows(html)
    assert rows[-1] == ("improved", "q1", "check-includes")
    assert [state for state, _, _ in rows].count("improved") == 1


def test_compare_page_with_several_runs(
    client: TestClient, runs: dict[str, str], store: Store
) -> None:
    html = client.get(
        f"/runs/{runs['bad']}/compare",
        params={"baseline": runs["good"], "runs": runs["good"]},
    ).text
    assert 'data-testid="paired-stats"' not in html and 'id="compare-statistics"' in html
    assert len(compare_statistics(runs["good"], [runs["bad"], runs["good"]], store=store)) == 2
    html = client.get(
        f"/runs/{runs['bad']}/compare",
        params={"baseline": runs["good"], "runs": runs["good"]},
    ).text
    assert html.count('data-testid="paired-stats"') == 2
    row = html.split('data-scorer="check-includes">')[1].split("</tr>")[0]
    # baseline 1.000, "bad" 0.000 (-1.000), "good" itself 1.000 (+0.000)
    assert "-1.000" in row and "+0.000" in row


def test_compare_page_without_baseline_offers_a_choice(
    client: TestClient, runs: dict[str, str]
) -> None:
    html = client.get(f"/runs/{runs['bad']}/compare").text
    assert f'<option value="{runs["good"]}"' in html
    assert 'data-testid="comparison"' not in html
    missing = client.get(f"/runs/{runs['bad']}/compare", params={"baseline": "nope"})
    assert missing.status_code == 404


def test_dataset_pages(client: TestClient, store: Store) -> None:
    store.datasets.create("qa", description="<b>bold</b> questions")
    store.datasets.add_items("qa", [{"id": "a", "input": "1+1?", "expected_output": "2"}])
    listing = client.get("/datasets").text
    assert 'href="/datasets/qa"' in listing
    assert "&lt;b&gt;bold&lt;/b&gt;" in listing
    page = client.get("/datasets/qa").text
    assert "1+1?" in page and "Version 1" in page
    assert client.get("/datasets/missing").status_code == 404
    launcher = client.get("/runs/new", params={"dataset": "qa"}).text
    assert '<option value="qa" selected>' in launcher


def test_calibrations_page_shows_stored_certificates(client: TestClient, store: Store) -> None:
    store.certificates.add(
        Certificate(
            fingerprint="f" * 64,
            fingerprint_parts={},
            scorer_type="answer-relevancy",
            scorer_label="Answer <Relevancy>",
            judge_model="openai/gpt-4o-mini",
            data_key="k",
            kind="continuous",
            n=80,
            statistics={"spearman": {"value": 0.71234, "ci_low": 0.6, "ci_high": 0.8, "n": 80}},
            gates=[{"statistic": "spearman", "min": 0.5, "passed": True}],
            passed=True,
        )
    )
    html = client.get("/calibrations").text
    assert html.count('data-testid="certificate"') == 1
    assert "Answer &lt;Relevancy&gt;" in html
    assert "spearman" in html and "0.712" in html and "0.600 – 0.800" in html
    assert "passed" in html and "n = 80" in html


def test_item_page_lists_the_annotation_history(
    client: TestClient, store: Store, runs: dict[str, str]
) -> None:
    first = AnnotationInput(author="ann", label="fail", comment="<i>wrong</i>")
    annotate(runs["good"], "q1", first, store=store)
    annotate(
        runs["good"], "q1", AnnotationInput(author="bob", label="pass", score=0.9), store=store
    )
    html = client.get(f"/runs/{runs['good']}/items/q1").text
    history = html.split('data-testid="annotation-history"')[1].split("</table>")[0]
    rows = re.findall(r'<tr class="annotation">(.*?)</tr>', history, re.S)
    assert len(rows) == 2
    assert "ann" in rows[0] and "fail" in rows[0] and "&lt;i&gt;wrong&lt;/i&gt;" in rows[0]
    assert "bob" in rows[1] and "pass" in rows[1] and "0.9" in rows[1]


def test_a_pending_run_page_is_live(client: TestClient, store: Store) -> None:
    info = RunInfo(
        id="pending0run",
        name="waiting",
        target=TargetSpec(kind="stored-output", label="stored output"),
        total_items=4,
        repeats=2,
    )
    store.runs.create(info)
    html = client.get("/runs/pending0run").text
    assert 'data-live="true"' in html and 'data-run-id="pending0run"' in html
    assert '<progress id="progress-bar" max="8" value="0">' in html
    assert 'data-testid="summary-table"' not in html  # no summary before it finishes
    assert "0 matching results" in html


def test_a_dataset_version_it_never_had_is_a_404_and_an_old_one_shows_its_items(
    client: TestClient, store: Store
) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", [{"id": "a", "input": "first", "expected_output": "1"}])
    store.datasets.add_items("qa", [{"id": "b", "input": "second", "expected_output": "2"}])
    assert client.get("/datasets/qa", params={"version": "99"}).status_code == 404
    old = client.get("/datasets/qa", params={"version": "1"})
    assert old.status_code == 200 and "first" in old.text and "second" not in old.text
    assert "Version 1" in old.text
    assert "second" in client.get("/datasets/qa").text
    assert client.get("/datasets/qa", params={"version": "x"}).status_code == 422


def test_paging_an_old_dataset_version_stays_on_that_version(
    client: TestClient, store: Store
) -> None:
    """The pager once dropped ``version``: page 2 of version 1 showed the latest's page 2."""
    from assay.server.ui.pages import PAGE_SIZE

    store.datasets.create("qa")
    first = [{"id": f"old{k:04d}", "input": "o"} for k in range(PAGE_SIZE + 1)]
    store.datasets.add_items("qa", first)
    store.datasets.add_items("qa", [{"id": f"new{k:04d}", "input": "n"} for k in range(5)])
    page_one = client.get("/datasets/qa", params={"version": "1"}).text
    nxt = re.search(r'href="([^"]*)" data-testid="dataset-next"', page_one)
    assert nxt and nxt.group(1) == f"?offset={PAGE_SIZE}&amp;version=1"
    page_two = client.get(f"/datasets/qa?offset={PAGE_SIZE}&version=1").text
    assert f"old{PAGE_SIZE:04d}" in page_two and "new0000" not in page_two
    assert 'data-testid="dataset-previous"' in page_two
    assert 'href="?version=1"' in page_two and 'href="?version=2"' in page_two


def test_favicon_is_served(client: TestClient) -> None:
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
    assert b"<svg" in icon.content


def test_scorers_page_lists_every_registered_type(client: TestClient) -> None:
    from assay.scoring.registry import list_scorers

    html = client.get("/scorers").text
    infos = list_scorers()
    assert len(re.findall(r'<tr id="scorer-', html)) == len(infos) > 10
    assert 'id="scorer-exact-match"' in html and "higher is better" in html
    assert 'href="/scorers"' in html


def test_item_ids_with_url_characters_work_in_pages_links_and_the_review_queue(
    client: TestClient, store: Store
) -> None:
    from urllib.parse import quote

    ids = ["a/b", "c?d#e", "f g", "h"]  # (TestClient decodes "%" twice: e2e has one)
    rows = [{"id": i, "input": i, "output": "x", "expected_output": "x"} for i in ids]
    run_id = run_stored(rows, None, ["exact-match"], store=store).id
    run_page = client.get(f"/runs/{run_id}").text
    for item in ids:
        link = f"/runs/{run_id}/items/{quote(item, safe='')}"
        assert link in run_page, item
        page = client.get(link)
        assert page.status_code == 200 and f"<code>{item}</code>" in page.text, item
    second = client.get(f"/runs/{run_id}/items/{quote('c?d#e', safe='')}").text
    assert "item 2 of 4" in second and "0 of 4 reviewed" in second
    assert f'href="/runs/{run_id}/items/a%2Fb" data-testid="queue-previous"' in second
    assert f'href="/runs/{run_id}/items/f%20g" data-testid="queue-next"' in second
    annotate(run_id, "a/b", AnnotationInput(author="r", label="pass"), store=store)
    first_unreviewed = client.get(f"/runs/{run_id}/items/h", params={"queue": "unreviewed"}).text
    assert "item 3 of 3 unreviewed" in first_unreviewed and "1 of 4 reviewed" in first_unreviewed
    assert client.get(f"/runs/{run_id}/items/h", params={"queue": "x"}).status_code == 422


def test_a_trajectory_item_shows_its_transcript(client: TestClient, store: Store) -> None:
    output = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "function": {"name": "lookup", "arguments": '{"q": "<b>"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result <i>"},
    ]
    rows = [
        {
            "id": "t",
            "input": [{"role": "user", "content": "find"}],
            "output": output,
            "expected_output": "x",
        }
    ]
    run_id = run_stored(rows, None, ["exact-match"], store=store).id
    html = client.get(f"/runs/{run_id}/items/t").text
    assert 'data-testid="transcript"' in html and html.count('class="turn ') == 3
    assert "lookup" in html and "&lt;b&gt;" in html and "result &lt;i&gt;" in html
    plain = run_stored(
        [{"id": "p", "input": "q", "output": "a", "expected_output": "a"}],
        None,
        ["exact-match"],
        store=store,
    ).id
    assert 'data-testid="transcript"' not in client.get(f"/runs/{plain}/items/p").text


def test_compare_defaults_to_the_latest_run_on_the_same_data_with_filters_grid_and_labels(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    import json as _json

    def data(name: str, outputs: list[str]) -> Path:
        path = tmp_path / name
        rows = [
            {"id": f"i{k}", "input": "q", "output": o, "expected_output": "a"}
            for k, o in enumerate(outputs)
        ]
        path.write_text("".join(_json.dumps(r) + "\n" for r in rows))
        return path

    same = data("same.jsonl", ["a", "b"])
    other = run_stored(data("other.jsonl", ["a", "a"]), None, ["exact-match"], store=store).id
    older = run_stored(same, None, ["exact-match"], store=store, name="older").id
    latest = run_stored(same, None, ["exact-match"], store=store, name="latest").id
    # the same file, changed outputs: i0 regresses, i1 improves
    newest = run_stored(data("same.jsonl", ["b", "a"]), None, ["exact-match"], store=store).id
    html = client.get(f"/runs/{newest}/compare").text
    assert (
        'data-testid="default-baseline"' in html
        and latest[:12] in html.split("default-baseline")[1][:300]
    )
    assert older and other
    assert 'data-testid="compare-filter-state"' in html and 'value="regressed"' in html
    assert html.count('data-testid="diff-label"') == 2 and f"→ <code>{newest[:8]}</code>" in html
    grid = html.split('data-testid="compare-grid"')[1]
    assert grid.count("<tr data-item-id=") == 2
    assert 'class="regressed"' in html and 'class="improved"' in html


def test_a_partial_run_says_k_of_n_on_its_page_the_list_and_compare(
    client: TestClient, store: Store, runs: dict[str, str]
) -> None:
    """Issue 25: an interrupted run reads "14 of 200" wherever it is shown, with Resume."""
    from assay.types import ItemResult

    info = RunInfo(
        id="partial0run",
        name="cut short",
        target=TargetSpec(kind="stored-output", label="stored output"),
        total_items=200,
    )
    store.runs.create(info)
    store.runs.write_results(
        info.id, [ItemResult(item_id=f"q{k}", position=k, output="x") for k in range(14)]
    )
    store.runs.finish(info.id, "interrupted", None)
    page = client.get("/runs/partial0run").text
    assert re.search(r'data-testid="run-count" class="partial">14 of 200 results<', page)
    assert "Partial run: 14 of 200 results stored (interrupted)" in page
    assert 'data-testid="resume-run"' in page and 'data-testid="cancel-run"' not in page
    assert "14 matching results" in page
    listing = client.get("/").text
    row = listing.split('data-run-id="partial0run"')[1].split("</tr>")[0]
    assert re.search(r'data-testid="run-results" class="partial">14 of 200<', row)
    whole = client.get(f"/runs/{runs['bad']}").text
    assert "3 of 3 results" in whole and 'data-testid="partial-run"' not in whole
    assert 'data-testid="resume-run"' not in whole
    compare = client.get(f"/runs/{runs['bad']}/compare?baseline=partial0run").text
    assert "Baseline <code>partial0run</code> cut short is partial: 14 of 200 results" in compare


def test_runs_list_sorts_by_any_column_and_draws_the_score_trend(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    """Issue 25: sortable columns with cost, latency and tags; a scorer's trend across the
    runs of one dataset (runs over inline lists have no trend: nothing says same items)."""
    import json as _json

    path = tmp_path / "qa.jsonl"

    def run(outputs: list[str], name: str) -> str:
        rows = [{"id": f"i{k}", "input": "q", "output": o} for k, o in enumerate(outputs)]
        path.write_text("".join(_json.dumps(r) + "\n" for r in rows))
        return run_stored(path, None, [_includes("a")], store=store, name=name).id

    low = run(["a", "b", "b", "b"], "low")
    high = run(["a", "a", "a", "b"], "high")
    mid = run(["a", "a", "b", "b"], "mid")
    store.runs.add_tags(mid, ["baseline"])

    def names(query: str) -> list[str]:
        html = client.get(f"/{query}").text
        return re.findall(r'data-testid="run-name">([^<]*)<', html)

    assert names("") == ["mid", "high", "low"]  # newest first
    assert names("?sort=score&order=desc") == ["high", "mid", "low"]
    assert names("?sort=score&order=asc") == ["low", "mid", "high"]
    assert names("?sort=name") == ["high", "low", "mid"]
    html = client.get("/?sort=score").text
    assert 'aria-sort="descending"' in html and 'data-testid="sort-score">Score <span' in html
    assert '<span class="tag">baseline</span>' in html.split(f'data-run-id="{mid}"')[1][:2000]
    trend = html.split('data-testid="run-trend"')[1].split("</svg>")[0]
    tips = re.findall(r"<circle [^>]*><title>run (\d): (\w+) (\w+) \([^)]*\): ([\d.]+)<", trend)
    assert [(k, run_id, name, mean) for k, run_id, name, mean in tips] == [
        ("1", low[:12], "low", "0.25"),
        ("2", high[:12], "high", "0.75"),
        ("3", mid[:12], "mid", "0.5"),
    ]
    for query, field in [
        ("?sort=price", "sort must be one of"),
        ("?order=up", "order must be &#39;asc&#39; or &#39;desc&#39;"),
        ("?data=nowhere", "data &#39;nowhere&#39;"),
    ]:
        answer = client.get(f"/{query}")
        assert answer.status_code == 422 and field in answer.text, query
    # a scorer the chosen dataset lacks falls back to its first
    assert 'data-testid="run-trend"' in client.get(f"/?data={path}&scorer=nope").text


def test_the_trend_title_is_shown_whole_in_html_not_cut_in_the_svg(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    """Issue 25: a long dataset name made the chart's title end in "…" (SVG text cannot
    wrap); the page now shows it whole in HTML above the chart, and the chart keeps it as
    its accessible name only."""
    path = tmp_path / ("quarterly-support-escalations-" * 4 + "<&>.jsonl")
    path.write_text('{"id": "i0", "input": "q", "output": "a"}\n')
    run_stored(path, None, [_includes("a")], store=store, name="only")
    html = client.get("/").text
    shown = re.search(r'data-testid="run-trend-title">([^<]*)<', html)
    assert shown is not None
    whole = f"Check: includes on {path} (higher is better)".replace("&", "&amp;")
    assert shown.group(1).replace("&lt;", "<").replace("&gt;", ">") == whole
    svg = html.split('data-testid="run-trend"')[1].split("</svg>")[0]
    assert "…" not in svg and 'font-weight="600"' not in svg  # no cut title drawn
    assert f"<title>{shown.group(1)}</title>" in svg  # the accessible name, whole


def test_run_items_page_size_position_expected_column_and_score_bands(
    client: TestClient, store: Store
) -> None:
    """Issue 25: a page-size selector, "page X of Y" (in both orders, with repeats), the
    expected output beside the output, and scores banded by a mark and a word, not only
    a colour."""
    many = [
        {"id": f"i{n:03d}", "input": f"q{n}", "output": f"a{n}", "expected_output": f"e{n}"}
        for n in range(120)
    ]
    run = run_stored(many, None, [_includes("a1")], store=store, repeats=2).id
    url = f"/runs/{run}"

    def position(**params: str) -> str:
        html = client.get(url, params=params).text
        found = re.search(r'data-testid="page-position">([^<]*)<', html)
        assert found, params
        return found.group(1)

    assert position() == "page 1 of 3"  # 50 items × 2 repeats per page
    assert position(page_size="25") == "page 1 of 5"
    assert position(page_size="25", offset="100") == "page 3 of 5"
    assert position(page_size="200") == "page 1 of 1"
    assert position(sort="score_desc", page_size="100", offset="100") == "page 2 of 2"
    html = client.get(url, params={"page_size": "25"}).text
    assert len(re.findall(r'<tbody class="item-group', html)) == 25
    assert re.search(r'<option value="25" selected>25</option>', html)
    assert re.search(r'data-testid="item-expected"><pre class="clip">e0</pre>', html)
    # i001's output "a1" includes "a1" (good), i000's "a0" does not (poor)
    first = html.split('data-item-id="i000"')[1].split("</tbody>")[0]
    second = html.split('data-item-id="i001"')[1].split("</tbody>")[0]
    assert 'data-band="bad" title="poor"><span class="mark" aria-hidden="true">▼</span>' in first
    assert '<span class="visually-hidden"> (poor)</span>' in first
    assert 'data-band="good" title="good"><span class="mark" aria-hidden="true">▲</span>' in second
    for bad in ("7", "0", "x", "1000"):
        answer = client.get(url, params={"page_size": bad})
        assert answer.status_code == 422 and "page_size must be" in answer.text, bad
    # the histograms come from their own route, as SVG with the counts in words
    svg = client.get(f"{url}/histograms").text
    assert svg.count('data-testid="score-histogram"') == 1
    # "a1" is in a1, a10..a19, a100..a119: 31 items, 62 results; the other 178 score 0
    assert "Histogram of 240 values" in svg
    assert 'data-count="178"' in svg and 'data-count="62"' in svg
    assert client.get("/runs/nope/histograms").status_code == 404


def _two_scored_runs(store: Store) -> None:
    """``base`` and ``cand`` over 121 items, scorers ``sim`` and ``other``: ``cand``'s
    ``sim`` dropped on items 0-119 and rose on ``late``; ``other`` never changed. 242
    rows, the one improved row last (page 5 of 50)."""
    from assay.types import ItemResult, ScoreResult, ScorerSpec

    specs = [ScorerSpec(id="sim", label="Sim"), ScorerSpec(id="other", label="Other")]
    for run_id, sim in (("base", lambda i: 0.5), ("cand", lambda i: 1.0 if i == 120 else 0.0)):
        store.runs.create(
            RunInfo(
                id=run_id,
                target=TargetSpec(kind="stored-output", label="stored"),
                scorers=specs,
                total_items=121,
            )
        )
        store.runs.write_results(
            run_id,
            [
                ItemResult(
                    item_id="late" if i == 120 else f"i{i:03d}",
                    position=i,
                    output=f"{run_id} {i}",
                    scores={
                        sid: ScoreResult(
                            scorer_id=sid,
                            scorer_label=sid,
                            call_id=f"{sid}{i}",
                            status="ready",
                            score=value,
                        )
                        for sid, value in (("sim", sim(i)), ("other", 0.25))
                    },
                )
                for i in range(121)
            ],
        )
        store.runs.finish(run_id, "completed", None)


def test_compare_page_filters_apply_over_the_whole_comparison(
    client: TestClient, store: Store
) -> None:
    _two_scored_runs(store)
    page = client.get("/runs/cand/compare", params={"baseline": "base"}).text
    rows = _compare_rows(page)
    assert len(rows) == 50 and {state for state, _, _ in rows} == {"regressed"}
    assert "late" not in {item for _, item, _ in rows}
    assert "242 item × scorer rows" in page
    # the improved row is on page 5 unfiltered; filtered, it is page 1, alone
    page = client.get("/runs/cand/compare", params={"baseline": "base", "state": "improved"}).text
    assert _compare_rows(page) == [("improved", "late", "sim")]
    assert "1 item × scorer rows" in page
    assert '<option value="improved" selected>' in page
    # by scorer: "other" never changed; its rows only, paged with the filter kept
    page = client.get("/runs/cand/compare", params={"baseline": "base", "scorer": "other"}).text
    rows = _compare_rows(page)
    assert len(rows) == 50 and {(s, sc) for s, _, sc in rows} == {("same", "other")}
    assert "121 item × scorer rows" in page
    [next_link] = re.findall(r'href="(\?[^"]*)">Next</a>', page)
    assert "&scorer=other&state=&offset=50" in next_link
    page = client.get(f"/runs/cand/compare{html.unescape(next_link)}").text
    rows = _compare_rows(page)
    assert len(rows) == 50 and {(s, sc) for s, _, sc in rows} == {("same", "other")}
    both = client.get(
        "/runs/cand/compare", params={"baseline": "base", "scorer": "other", "state": "regressed"}
    ).text
    assert _compare_rows(both) == [] and "0 item × scorer rows" in both
    # page 3 of the regressed rows of "sim" only
    page = client.get(
        "/runs/cand/compare",
        params={"baseline": "base", "scorer": "sim", "state": "regressed", "offset": "100"},
    ).text
    assert [item for _, item, _ in _compare_rows(page)] == [f"i{i:03d}" for i in range(100, 120)]
    bad = client.get("/runs/cand/compare", params={"baseline": "base", "state": "worse"})
    assert bad.status_code == 422 and "state must be one of" in bad.text
