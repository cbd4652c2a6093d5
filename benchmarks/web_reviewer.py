"""The reviewer tools of the web UI on a large run (issue 25): what they add to a page.

Builds one run of ``--items`` items (default 100,000; the seeded builder of
``benchmarks/web.py``) in a SQLite file (or a PostgreSQL schema: ``--store``), starts
the app under uvicorn in a child process and measures over real HTTP on loopback:

- the run page's first page at each page size (25, 50, 200): the expected-output column and
  the score bands are drawn per row, so the largest page shows their cost,
- the score histograms (``/runs/{id}/histograms``): cold (the grouped count in SQL) and warm
  (cached per run and stored-result count),
- the runs list (``/``) with 200 runs listed, sorted by score, with the score trend.

Goals: each < 300 ms (the cold histogram included: it loads after the page, but a reviewer
waits for it). Timings are the median of ``--repeats`` requests (the cold histogram: one).

Run: ``.venv/bin/python benchmarks/web_reviewer.py [--items 100000] [--repeats 5]
[--store postgresql+psycopg://user:pw@host/db]`` (PostgreSQL: a new schema, dropped after).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from assay.store import open_store
from assay.types import RunInfo, RunSummary, ScorerSummary, TargetSpec

_spec = importlib.util.spec_from_file_location("bench_web", Path(__file__).with_name("web.py"))
assert _spec is not None and _spec.loader is not None
web = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(web)


def _small_runs(url: str, count: int) -> None:
    """``count`` finished runs over one dataset, each with a summary (the runs list)."""
    with open_store(url) as store:
        for k in range(count):
            run_id = f"small-{k:03d}"
            store.runs.create(
                RunInfo(
                    id=run_id,
                    name=run_id,
                    dataset_name="qa",
                    target=TargetSpec(kind="stored-output", label="stored"),
                    total_items=10,
                    created_at=1_700_000_000.0 + k,
                    tags=[f"t{k % 5}"],
                )
            )
            mean = (k * 37 % 100) / 100
            summary = RunSummary(
                items=10,
                results=10,
                weighted_score=mean,
                cost_usd=k / 1000,
                latency_ms_p50=100.0 + k,
                scorers={
                    "similarity": ScorerSummary(
                        scorer_id="similarity", scorer_label="Similarity", mean=mean
                    )
                },
            )
            store.runs.finish(run_id, "completed", summary)


def _ms(client: httpx.Client, path: str, repeats: int) -> tuple[float, int]:
    times, status = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        answer = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        status = answer.status_code
    return statistics.median(times), status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--store",
        default=None,
        help="a PostgreSQL URL: the runs go to a new schema there, dropped at the end "
        "(default: an SQLite file in a temporary directory)",
    )
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="assay-reviewer-bench-") as tmp,
        web._store_url(args.store, Path(tmp)) as url,
    ):
        print(f"store: {url.split('@')[-1]}")
        started = time.perf_counter()
        with open_store(url) as store:
            web.build_run(store, "big", args.items, seed=1)
        _small_runs(url, 199)
        print(f"built a {args.items:,}-item run and 199 small ones in ", end="")
        print(f"{time.perf_counter() - started:.1f} s")
        port = web._free_port()
        env = {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_SERVER_TOKEN": ""}
        command = [
            sys.executable, "-m", "uvicorn", "--factory", "assay.server.app:app_from_env",
            "--port", str(port), "--log-level", "warning",
        ]  # fmt: skip
        server = subprocess.Popen(command, env=env)
        rows: list[tuple[str, float, int]] = []
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                for _ in range(300):
                    try:
                        client.get("/api/runs")
                        break
                    except httpx.TransportError:
                        time.sleep(0.1)
                # warm the server (first-request costs) on a small run: "cold" below is
                # the big run's count, not the process's first histogram
                client.get("/runs/small-000")
                client.get("/runs/small-000/histograms")
                last = args.items - 200
                plan = [
                    ("histograms, cold (SQL count)", "/runs/big/histograms", 1),
                    ("histograms, warm (cached)", "/runs/big/histograms", args.repeats),
                    *[
                        (f"run page, {n} items per page", f"/runs/big?page_size={n}", args.repeats)
                        for n in (25, 50, 200)
                    ],
                    (
                        "run page, last page of 200",
                        f"/runs/big?page_size=200&offset={last}",
                        args.repeats,
                    ),
                    ("runs list, 200 runs, sorted by score, trend", "/?sort=score", args.repeats),
                ]
                for label, path, repeats in plan:
                    rows.append((label, *_ms(client, path, repeats)))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{'request':48} {'ms':>8}  status  verdict (goal < 300 ms)")
    for label, ms, status in rows:
        verdict = "ok" if status == 200 and ms < 300 else "SLOW/FAIL"
        print(f"{label:48} {ms:8.1f}  {status:6}  {verdict}")


if __name__ == "__main__":
    main()
