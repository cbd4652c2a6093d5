"""The HTTP server over a large stored run (issue 12).

Builds (directly through the store, seeded) two runs of ``--items`` items (default
100,000) with one scorer each, in a SQLite file, then starts ``assay serve``'s app under
uvicorn in a child process and measures over real HTTP on loopback:

- the run-detail API's first page (``GET /api/runs/{id}/items?limit=50``),
- a filtered page (score range + scorer + text search),
- the HTML run page (``GET /runs/{id}``, the web UI's; reported missing if it 404s),
- a compare of the two runs, first page of rows (``GET /api/runs/{b}/compare?baseline={a}
  &statistics=false``), a deep page, and the paired statistics
  (``/compare/statistics``: the bootstrap over every item, cold, then cached), and the
  default compare of a pair whose statistics are not cached (rows at once, statistics
  pending) with the time until the background job has them,
- a page of a scorer's regressed items (``/compare/items``: the lists the compare page's
  statistics leave out),
- in headless Chromium (``/usr/bin/chromium`` through Playwright; ``--skip-browser`` to
  leave out): the run page's first page, sorted, filtered, searched, errors only, and the
  compare page (first page, regressed only, page 3), from navigation to the table in the
  DOM,
- paging through every item (``limit=500``), sampling the server's RSS, to show that
  memory stays flat,
- the default compare page after a server restart: its statistics read from the store
  (computed once, stored: issue 25), nothing pending.

Goals: each page < 300 ms, the compare's first page < 1 s, RSS flat while paging.
Each timing is the median of ``--repeats`` requests (the cold compare: one request).

Run: ``.venv/bin/python benchmarks/web.py [--items 100000] [--repeats 5]
[--store postgresql+psycopg://user:pw@host/db] [--db runs.db]`` (PostgreSQL: a new
schema, dropped after; ``--db``: an SQLite file built once and reused while iterating).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from assay.store import Store, open_store
from assay.types import ItemResult, RunInfo, ScoreResult, ScorerSpec, TargetSpec

WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta",
    "eta", "theta", "iota", "kappa", "lambda", "mu",
]  # fmt: skip


def _results(n: int, seed: int) -> list[ItemResult]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        score = round(rng.random(), 3)
        text = " ".join(rng.choices(WORDS, k=8))
        out.append(
            ItemResult(
                item_id=f"item-{i:06d}",
                position=i,
                input=f"question {i}: {text}",
                output=f"answer {text}",
                expected_output=f"answer {WORDS[i % len(WORDS)]}",
                latency_ms=rng.uniform(50, 500),
                scores={
                    "similarity": ScoreResult(
                        scorer_id="similarity",
                        scorer_label="Similarity",
                        call_id=f"c{i}",
                        status="ready",
                        score=score,
                        reason="seeded",
                    )
                },
            )
        )
    return out


def build_run(store: Store, run_id: str, n: int, seed: int) -> None:
    spec = ScorerSpec(id="similarity", label="Similarity")
    store.runs.create(
        RunInfo(
            id=run_id,
            name=run_id,
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=[spec],
            total_items=n,
        )
    )
    batch = 2000
    for start in range(0, n, batch):
        chunk = _results(min(batch, n - start), seed + start)
        chunk = [
            r.model_copy(update={"item_id": f"item-{start + i:06d}", "position": start + i})
            for i, r in enumerate(chunk)
        ]
        store.runs.write_results(run_id, chunk)
    store.runs.finish(run_id, "completed", None)


@contextlib.contextmanager
def _store_url(postgres: str | None, tmp: Path, kept: Path | None = None) -> Iterator[str]:
    """An SQLite file in ``tmp`` (or ``kept``, left in place), or a fresh schema on the
    PostgreSQL server ``postgres`` (``search_path`` in the URL), dropped afterwards."""
    if postgres is None:
        yield f"sqlite:///{(kept or tmp / 'bench.db').resolve()}"
        return
    schema = f"assay_web_bench_{secrets.token_hex(4)}"
    admin = sa.create_engine(postgres)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = sa.make_url(postgres).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _wait_up(client: httpx.Client) -> None:
    """Until the server answers (30 s at most)."""
    for _ in range(300):
        try:
            client.get("/api/runs")
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start within 30 s")


def timed(client: httpx.Client, url: str, repeats: int) -> tuple[float, int]:
    times = []
    status = 0
    for _ in range(repeats):
        start = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        status = answer.status_code
    return statistics.median(times), status


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
ITEMS_TABLE = "[data-testid=items-table] tbody tr"
COMPARE_TABLE = "[data-testid=compare-rows] tbody tr"
FLOOR_ITEMS = 20
"""The floor's run: the same run page with this many items, so what the browser itself costs
(a new tab's navigation, parsing, styles, the page's script) is shown beside the 100k pages."""
BROWSER_PAGES = [
    (f"floor: run page of a {FLOOR_ITEMS}-item run", "/runs/tiny", ITEMS_TABLE),
    ("run page, first page", "/runs/cand", ITEMS_TABLE),
    ("sorted by score", "/runs/cand?sort=score_desc", ITEMS_TABLE),
    ("filter 0.2-0.4", "/runs/cand?scorer=similarity&min_score=0.2&max_score=0.4", ITEMS_TABLE),
    ("text search q=gamma", "/runs/cand?q=gamma", ITEMS_TABLE),
    ("errors only (none)", "/runs/cand?errors_only=1", "[data-testid=items-count]"),
    ("compare, first page", "/runs/cand/compare?baseline=base", COMPARE_TABLE),
    ("compare, regressed only", "/runs/cand/compare?baseline=base&state=regressed", COMPARE_TABLE),
    ("compare, page 3", "/runs/cand/compare?baseline=base&offset=100", COMPARE_TABLE),
]  # fmt: skip


SEEN_SCRIPT = """
(() => {
  const wanted = %s;
  const seen = {};
  const look = () => {
    for (const selector of wanted) {
      if (selector in seen || !document.querySelector(selector)) continue;
      seen[selector] = performance.now();
    }
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true });
  window.__assaySeen = seen;
})();
"""
"""Run in each page before its own scripts: when each selector first matches, in the page's
clock (0 = navigation start), seen by a MutationObserver as the parser attaches nodes."""

PAGE_CLOCK = """selector => {
  const nav = performance.getEntriesByType("navigation")[0];
  return [nav.responseStart, (window.__assaySeen || {})[selector], nav.domContentLoadedEventEnd];
}"""


def in_page_timings(browser: Any, base: str, repeats: int) -> None:
    """The same loads (fresh tab each, cache kept) timed by the page's own clock: from
    navigation start to the first byte (``responseStart``), to the table's first row
    attached (``SEEN_SCRIPT``), to ``DOMContentLoaded``. Playwright's
    ``wait_for_selector`` polls at 0, 20, 70, 170, 270, 770 ms after the commit (its
    backoff) and its first poll waits for its own script to be set up in the new tab, so the
    figures above are when Playwright saw the row, an upper bound of this one."""
    selectors = sorted({selector for _, _, selector in BROWSER_PAGES})
    context = browser.new_context()
    try:
        context.add_init_script(SEEN_SCRIPT % json.dumps(selectors))
        warm = context.new_page()
        warm.goto(f"{base}/runs/cand", timeout=60_000)
        warm.close()
        print("by the page's own clock (navigation start = 0; median of fresh tabs):")
        for label, path, selector in BROWSER_PAGES:
            marks = []
            for _ in range(repeats):
                tab = context.new_page()
                tab.goto(base + path, wait_until="load", timeout=60_000)
                marks.append(tab.evaluate(PAGE_CLOCK, selector))
                tab.close()
            first_byte, row, loaded = (
                statistics.median(m[i] for m in marks if m[i] is not None) for i in range(3)
            )
            print(
                f"  page    {label:45s} first byte {first_byte:6.1f}  row attached "
                f"{row:6.1f}  DOMContentLoaded {loaded:6.1f} ms"
            )
    finally:
        context.close()


def same_tab_timings(browser: Any, base: str, repeats: int) -> None:
    """As a reviewer clicks from page to page: one tab, each page loaded after the one
    before, timed as ``browser_timings`` times them (navigation until the table row is
    seen by Playwright). Beside the fresh-tab figures, not instead of them."""
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.goto(f"{base}/runs/cand", timeout=60_000)
        print("in one tab, page after page (navigation until Playwright sees the table):")
        for label, path, selector in BROWSER_PAGES:
            times = []
            for _ in range(repeats):
                tab.goto(f"{base}/runs/tiny", timeout=60_000)  # from another page each time
                start = time.perf_counter()
                tab.goto(base + path, wait_until="commit", timeout=60_000)
                tab.wait_for_selector(selector, state="attached", timeout=60_000)
                times.append((time.perf_counter() - start) * 1000)
            print(f"  same tab {label:44s} {statistics.median(times):8.1f} ms")
    finally:
        context.close()


def browser_timings(base: str, repeats: int) -> None:
    """Issue 25's timings in a real headless Chromium: from navigation start until the
    page's table (its first row; for errors only, the count) is in the DOM, median of
    ``repeats`` loads in a fresh tab each (the browser's cache kept, as a reviewer's)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            warm = context.new_page()
            warm.goto(f"{base}/runs/cand", timeout=60_000)  # static assets cached once
            warm.close()
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"in headless Chromium (navigation until the table is rendered), load {load}:")
            for label, path, selector in BROWSER_PAGES:
                times = []
                for _ in range(repeats):
                    tab = context.new_page()
                    start = time.perf_counter()
                    tab.goto(base + path, wait_until="commit", timeout=60_000)
                    tab.wait_for_selector(selector, state="attached", timeout=60_000)
                    times.append((time.perf_counter() - start) * 1000)
                    tab.close()
                ms = statistics.median(times)
                goal = 1000 if label.startswith("compare") else 300
                verdict = "ok" if ms < goal else "SLOW"
                if label.startswith("floor"):
                    verdict = "(the browser's own cost)"
                print(f"  browser {label:45s} {ms:8.1f} ms  goal < {goal} ms  {verdict}")
            context.close()
            in_page_timings(browser, base, repeats)
            same_tab_timings(browser, base, repeats)
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"load after the browser timings: {load}")
        finally:
            browser.close()


def export_cpu(store: Store) -> None:
    """The export's own cost, in process: CPU seconds of ``export_lines`` as the server
    calls it (its client view), per format, without HTTP (whose client and server share
    the machine's cores with it)."""
    from assay.operations.run_items import ExportFormat, export_lines
    from assay.server.client_view import result_dict_for_client, result_for_client, safe_text

    formats: tuple[ExportFormat, ...] = ("csv", "jsonl")
    for fmt in formats:
        start = time.process_time()
        _, pieces = export_lines(
            "cand",
            fmt,
            store=store,
            view=result_for_client,
            error_text=safe_text,
            json_view=result_dict_for_client,
        )
        size = sum(len(piece) for piece in pieces)
        cpu = time.process_time() - start
        rows = store.runs.get("cand").completed_results
        print(
            f"export {fmt} in process: {rows:,} rows, {size / 1e6:.1f} MB in {cpu:.2f} CPU s "
            f"= {rows / cpu:,.0f} rows per CPU second"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--store",
        default=None,
        help="a PostgreSQL URL (postgresql+psycopg://...): the runs go to a new schema there, "
        "dropped at the end; default: an SQLite file in a temporary directory",
    )
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="an SQLite file to keep the runs in and reuse: built when missing, else used as "
        "it is (its runs must have been built with the same --items); default: a new file "
        "in a temporary directory",
    )
    parser.add_argument(
        "--skip-browser",
        action="store_true",
        help="leave out the timings in headless Chromium (/usr/bin/chromium via Playwright)",
    )
    args = parser.parse_args()

    with (
        tempfile.TemporaryDirectory(prefix="assay-web-bench-") as tmp,
        _store_url(args.store, Path(tmp), args.db) as url,
    ):
        print(f"store: {url.split('@')[-1]}")
        started = time.perf_counter()
        if args.db is not None and args.db.exists():
            print(f"reusing the runs in {args.db}")
        else:
            with open_store(url) as store:
                build_run(store, "base", args.items, seed=1)
                build_run(store, "cand", args.items, seed=2)
                build_run(store, "tiny", FLOOR_ITEMS, seed=3)
            print(f"built 2 runs x {args.items:,} items in {time.perf_counter() - started:.1f} s")
        with open_store(url) as store:
            export_cpu(store)

        port = _free_port()
        env = {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_SERVER_TOKEN": ""}
        command = [
            sys.executable, "-m", "uvicorn", "--factory", "assay.server.app:app_from_env",
            "--port", str(port), "--log-level", "warning",
        ]  # fmt: skip
        server = subprocess.Popen(command, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=60) as client:
                _wait_up(client)
                rows = []

                def measure(label: str, path: str, goal_ms: float, repeats: int) -> None:
                    ms, status = timed(client, path, repeats)
                    ok = status == 200 and ms < goal_ms
                    verdict = "ok" if ok else ("MISSING" if status == 404 else "SLOW/FAIL")
                    rows.append((label, ms, status, goal_ms, verdict))

                measure(
                    "run items, first page (50)", "/api/runs/cand/items?limit=50", 300, args.repeats
                )
                measure(
                    "run items, filtered page (score 0.2-0.4, q=gamma)",
                    "/api/runs/cand/items?limit=50&scorer=similarity&min_score=0.2&max_score=0.4&q=gamma",
                    300,
                    args.repeats,
                )
                measure(
                    "run items, errors only (none)",
                    "/api/runs/cand/items?errors_only=true",
                    300,
                    args.repeats,
                )
                measure("HTML run page /runs/{id}", "/runs/cand", 300, args.repeats)
                # issue 25: the web UI's run page sorted by score, filtered, searched
                for label, query in [
                    ("HTML sorted by score, descending", "sort=score_desc"),
                    ("HTML sorted by score, ascending", "sort=score_asc&scorer=similarity"),
                    ("HTML sorted, deep page (offset 50,000)", "sort=score_desc&offset=50000"),
                    ("HTML filter score 0.2-0.4", "scorer=similarity&min_score=0.2&max_score=0.4"),
                    (
                        "HTML filter 0.2-0.4, sorted by score",
                        "min_score=0.2&max_score=0.4&sort=score_asc",
                    ),
                    ("HTML text search q=gamma", "q=gamma"),
                    ("HTML text search q=gamma, sorted by score", "q=gamma&sort=score_desc"),
                    ("HTML errors only (none)", "errors_only=1"),
                ]:
                    measure(label, f"/runs/cand?{query}", 300, args.repeats)
                compare = "/api/runs/cand/compare?baseline=base&limit=50"
                measure(
                    "compare first page, rows only (cold)", compare + "&statistics=false", 1000, 1
                )
                measure(
                    "compare first page, rows only",
                    compare + "&statistics=false",
                    1000,
                    args.repeats,
                )
                measure(
                    "compare page 101 (offset 5,000), rows only",
                    compare + "&offset=5000&statistics=false",
                    1000,
                    args.repeats,
                )
                stats = "/api/runs/cand/compare/statistics?baseline=base"
                measure("compare statistics alone, cold (bootstrap)", stats, 1000, 1)
                measure("compare statistics alone, cached", stats, 1000, args.repeats)
                measure("compare first page with statistics (cached)", compare, 1000, args.repeats)
                # the default request on a pair whose statistics are not cached (another
                # threshold is another key): rows at once, statistics in the background
                pending = compare + "&threshold=0.5"
                measure("compare first page, default, uncached stats (cold)", pending, 1000, 1)
                started = time.perf_counter()
                while client.get(pending).json()["statistics_pending"]:
                    time.sleep(0.05)
                ready_ms = (time.perf_counter() - started) * 1000
                rows.append(
                    ("  ... its statistics ready in background after", ready_ms, 200, 0, "")
                )
                measure(
                    "compare regressed items of a scorer, page 1 (cached)",
                    "/api/runs/cand/compare/items?baseline=base&scorer=similarity&limit=50",
                    1000,
                    args.repeats,
                )
                sizes = [
                    len(client.get(f"{compare}&offset={offset}").content) for offset in (0, 50)
                ]
                print(
                    f"compare page bytes with cached statistics: first {sizes[0]:,}, "
                    f"second {sizes[1]:,} (statistics on the first page only)"
                )
                for label, ms, status, goal, verdict in rows:
                    print(
                        f"{label:55s} {ms:8.1f} ms  HTTP {status}  goal < {goal:.0f} ms  {verdict}"
                    )

                for fmt in ("csv", "jsonl"):
                    # the client reads the raw body in 1 MB pieces and only counts line
                    # ends (no decoding, no line splitting): the figure is the server's
                    started = time.perf_counter()
                    newlines = size = 0
                    with client.stream("GET", f"/api/runs/cand/export?format={fmt}") as answer:
                        for data in answer.iter_raw(1 << 20):
                            newlines += data.count(b"\n")
                            size += len(data)
                    took = time.perf_counter() - started
                    exported = newlines - (fmt == "csv")  # the CSV's header line
                    print(
                        f"export {fmt}: {exported:,} rows, {size / 1e6:.1f} MB in {took:.2f} s = "
                        f"{exported / took:,.0f} rows/s (goal >= 20,000)"
                    )

                if not args.skip_browser:
                    browser_timings(base, args.repeats)

                samples = []
                page_times = []
                offset = 0
                pages = 0
                while True:
                    start = time.perf_counter()
                    page = client.get(f"/api/runs/cand/items?limit=500&offset={offset}").json()
                    page_times.append((time.perf_counter() - start) * 1000)
                    if pages % 20 == 0:
                        samples.append(rss_mb(server.pid))
                    pages += 1
                    offset += len(page["items"])
                    if not page["items"]:
                        break
                samples.append(rss_mb(server.pid))
                print(
                    f"paged {offset:,} items in {pages} pages of 500: median "
                    f"{statistics.median(page_times):.0f} ms, max {max(page_times):.0f} ms per page"
                )
                print(
                    "server RSS MB while paging (every 20 pages): "
                    + ", ".join(f"{s:.0f}" for s in samples)
                    + f"  (first {samples[0]:.0f}, max {max(samples):.0f}, last {samples[-1]:.0f})"
                )

                # the statistics are stored (issue 25): a restarted server, its memory
                # empty, answers the default compare page with them, computing nothing
                server.terminate()
                server.wait(timeout=10)
                server = subprocess.Popen(command, env=env)
                _wait_up(client)
                after = [timed(client, compare, 1)[0] for _ in range(args.repeats)]
                body = client.get(compare).json()
                present = bool(body["statistics"]) and not body["statistics_pending"]
                ms = statistics.median(after)
                verdict = "ok" if present and ms < 1000 else "SLOW/FAIL"
                print(
                    f"after a server restart, compare first page (default) {ms:8.1f} ms "
                    f"(first {after[0]:.1f}), statistics "
                    f"{'read from the store' if present else 'MISSING (pending)'}  "
                    f"goal < 1000 ms  {verdict}"
                )
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
