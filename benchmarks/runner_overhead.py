"""Runner overhead on the path users take, measured beside the floor in one process run.

Workload (issue 14): N items (default 100,000), a zero-latency target that returns its
input, the ``exact-match`` scorer, concurrency 20. Rows, all in one run so their ratios are
comparable (the 2 cores are shared, so each row is the median of ``--repeats`` runs, and
the rows of one repetition run back to back):

1. ``floor``: plain asyncio — one task per item under an ``asyncio.Semaphore(20)``, a real
   ``await asyncio.sleep(0)`` per item, the target call and the ``==`` comparison. What any
   asyncio runner costs at least.
2. ``run_evals, async target``: ``assay.run_evals_async`` with an ``async def`` target,
   default settings (only ``concurrency=20`` and ``progress=False``), in memory. Timed from
   the call, so start-up (planning, validating the items) is included.
3. ``run_evals, def target``: the same with a plain ``def`` target, the form the README
   shows.
4. ``run_stored → SQLite``: ``run_stored_async`` on a fresh SQLite file with the ``def``
   target (items saved with the run, every result and score written), timed including the
   final commit.

Goals: row 2 ≤ 2× the floor, row 3 ≤ 3× the floor, row 4 ≤ 150 µs/item over the floor.

Memory (``--memory-sizes``, default 10,000 and 100,000): a fresh child process per size and
stored path runs the workload from a JSONL file (``run_stored``) and from a stored dataset
(``run_dataset``) and prints the RSS high-water mark before and after the run and the
tracemalloc peak during it; the goal is that they do not grow with the number of items.

Run: ``.venv/bin/python benchmarks/runner_overhead.py [--items 100000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

CONCURRENCY = 20


def make_items(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"i{i}", "input": f"q{i}", "expected_output": f"q{i}" if i % 2 else "other"}
        for i in range(n)
    ]


async def async_target(text: str) -> str:
    return text


def def_target(text: str) -> str:
    return text


async def floor(rows: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    semaphore = asyncio.Semaphore(CONCURRENCY)
    hits = 0

    async def one(row: dict[str, Any]) -> None:
        nonlocal hits
        async with semaphore:
            await asyncio.sleep(0)
            hits += def_target(row["input"]) == row["expected_output"]

    await asyncio.gather(*(one(row) for row in rows))
    elapsed = time.perf_counter() - start
    assert hits == len(rows) // 2, hits
    return elapsed


async def run_evals_with(rows: list[dict[str, Any]], target: Callable[..., Any]) -> float:
    from assay.runner.api import run_evals_async

    start = time.perf_counter()
    run = await run_evals_async(
        rows, target, ["exact-match"], concurrency=CONCURRENCY, progress=False
    )
    elapsed = time.perf_counter() - start
    assert run.summary.results == len(rows), run.summary
    assert len(run.results) == len(rows)
    return elapsed


async def run_evals_async_target(rows: list[dict[str, Any]]) -> float:
    return await run_evals_with(rows, async_target)


async def run_evals_def_target(rows: list[dict[str, Any]]) -> float:
    return await run_evals_with(rows, def_target)


async def run_stored_sqlite(rows: list[dict[str, Any]]) -> float:
    from assay.operations.stored_runs import run_stored_async
    from assay.store import open_store

    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/bench.db") as store:
        start = time.perf_counter()
        run = await run_stored_async(
            rows, def_target, ["exact-match"], store=store, concurrency=CONCURRENCY, progress=False
        )
        elapsed = time.perf_counter() - start
        assert run.summary.results == len(rows), run.summary
        stored = sum(1 for _ in store.runs.score_rows(run.id))
        assert stored == len(rows), stored
    return elapsed


ROWS: dict[str, Callable[[list[dict[str, Any]]], Awaitable[float]]] = {
    "floor (asyncio + semaphore + sleep(0))": floor,
    "run_evals, async target": run_evals_async_target,
    "run_evals, def target": run_evals_def_target,
    "run_stored → SQLite, def target": run_stored_sqlite,
}


_CHILD = """
import asyncio, json, sys, tracemalloc
sys.path.insert(0, {here!r})
from runner_overhead import def_target, CONCURRENCY, vm_hwm_mib
from assay.store import open_store
from assay.operations.stored_runs import run_dataset_async, run_stored_async
from assay.types import Item

n, path, mode, cache_kib = {n}, {path!r}, {mode!r}, {cache_kib}
def items():
    for i in range(n):
        yield Item(id=f"i{{i}}", input=f"q{{i}}", expected_output=f"q{{i}}" if i % 2 else "other")

with open_store(f"sqlite:///{{path}}.db") as store:
    if cache_kib:  # every connection opened from here on gets this page cache bound
        import sqlalchemy as sa
        sa.event.listen(store.engine, "connect",
                        lambda conn, _: conn.execute(f"PRAGMA cache_size=-{{cache_kib}}"))
        store.engine.dispose()
    if mode == "run_dataset":
        store.datasets.create("bench")
        store.datasets.add_items("bench", items())
    else:
        with open(f"{{path}}.jsonl", "w") as out:
            for item in items():
                out.write(item.model_dump_json() + "\\n")
    before = vm_hwm_mib()
    tracemalloc.start()
    if mode == "run_dataset":
        run = asyncio.run(run_dataset_async("bench", def_target, ["exact-match"], store=store,
                                            concurrency=CONCURRENCY, progress=False))
    else:
        run = asyncio.run(run_stored_async(f"{{path}}.jsonl", def_target, ["exact-match"],
                                           store=store, concurrency=CONCURRENCY, progress=False))
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    assert run.summary.results == n
print(before, vm_hwm_mib(), traced)
"""


def child_memory(
    mode: str, n: int, workdir: Path, cache_kib: int = 0
) -> tuple[float, float, float]:
    """(RSS high-water before the run, after it, tracemalloc peak during it) in MiB, of a
    fresh process running ``mode`` (``run_stored`` from a JSONL file, or ``run_dataset``).

    ``VmHWM`` is read from /proc (``ru_maxrss`` would include the parent's RSS at fork);
    tracemalloc sees Python allocations, not SQLite's page cache. ``cache_kib`` (0: SQLite's
    default, 2 MiB per connection) bounds each connection's page cache, which shows how
    much of the RSS is the caches filling as the database grows.
    """
    code = _CHILD.format(
        here=str(Path(__file__).parent),
        n=n,
        path=str(workdir / f"{mode}{n}"),
        mode=mode,
        cache_kib=cache_kib,
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, traced = (float(x) for x in out.stdout.split())
    return before, after, traced


def vm_hwm_mib() -> float:
    """This process's peak resident set size (Linux ``VmHWM``), MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-sizes", default="10000,100000")
    parser.add_argument("--only", choices=("speed", "memory"), default=None)
    parser.add_argument(
        "--memory-modes",
        default="run_stored,run_dataset",
        help="stored paths measured for memory (comma-separated)",
    )
    parser.add_argument(
        "--sqlite-cache-kib",
        type=int,
        default=0,
        help="PRAGMA cache_size per connection in the memory runs (0: SQLite's default)",
    )
    args = parser.parse_args()
    rows = make_items(args.items)
    load = os.getloadavg()[0]
    print(f"# runner overhead — {args.items:,} items, concurrency {CONCURRENCY}, exact-match,")
    print(
        f"# median of {args.repeats}; Python {platform.python_version()} on "
        f"{platform.machine()}, {os.cpu_count()} cores, load {load:.2f}"
    )
    timings: dict[str, list[float]] = {name: [] for name in ROWS}
    if args.only != "memory":
        asyncio.run(run_evals_def_target(rows[:200]))  # imports, as a user's earlier code would
        for _ in range(args.repeats):
            for name, measure in ROWS.items():
                gc.collect()  # every row starts from the same heap, not the last row's garbage
                timings[name].append(asyncio.run(measure(rows)))
        base = statistics.median(timings[next(iter(ROWS))])
        print(
            f"{'mode':<40} {'seconds':>8} {'items/s':>10} {'µs/item':>8} {'over floor':>11} "
            f"{'× floor':>8}"
        )
        for name, values in timings.items():
            seconds = statistics.median(values)
            per_item = seconds / args.items * 1e6
            over = (seconds - base) / args.items * 1e6
            print(
                f"{name:<40} {seconds:>8.2f} {args.items / seconds:>10,.0f} {per_item:>8.1f} "
                f"{over:>11.1f} {seconds / base:>8.2f}"
            )
    if args.only != "speed":
        print()
        cache = f"{args.sqlite_cache_kib} KiB" if args.sqlite_cache_kib else "default"
        print(f"# SQLite page cache per connection: {cache}")
        print(
            f"{'stored path':<14} {'items':>8} {'RSS before':>11} {'RSS after':>10} "
            f"{'traced peak':>12}   (MiB)"
        )
        with tempfile.TemporaryDirectory() as tmp:
            for mode in (m for m in args.memory_modes.split(",") if m):
                for size in (int(x) for x in args.memory_sizes.split(",") if x):
                    before, after, traced = child_memory(
                        mode, size, Path(tmp), args.sqlite_cache_kib
                    )
                    print(f"{mode:<14} {size:>8,} {before:>11.1f} {after:>10.1f} {traced:>12.1f}")
    print(json.dumps({k: [round(v, 3) for v in vs] for k, vs in timings.items() if vs}))


if __name__ == "__main__":
    main()
