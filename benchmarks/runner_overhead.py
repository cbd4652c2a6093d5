"""Runner overhead: how many items per second the runner itself can move.

Workload (the issue's): N items (default 100,000), a trivial async target (returns its
input), the ``exact-match`` scorer, concurrency 64. Four rows, measured in one process run
so their ratios are comparable:

1. ``floor: plain asyncio``   64 worker coroutines pulling from one iterator, awaiting the
   target and comparing strings: what any runner costs at least.
2. ``floor: asyncio + scorer`` the same loop calling ``scorer.run`` (the scorer pipeline's
   own cost, which every runner pays too).
3. ``run_evals (memory)``     ``assay.run_evals_async``: results kept in memory.
4. ``run_stored (SQLite)``    ``run_stored_async`` on a fresh SQLite file: items saved with
   the run, every result + score written through ``StoreSink`` (batched transactions).

Overhead per item = (1 / rate) - (1 / floor rate).

Memory: a fresh child process per size (``--memory-sizes``) stores the items as a dataset
(streamed), then runs the persisted workload on it (``run_dataset``: items streamed from the
database, results streamed to it). It prints the RSS high-water mark before and after the
run and the tracemalloc peak during the run; the goal is that they do not grow with the
number of items.

Run: ``.venv/bin/python benchmarks/runner_overhead.py [--items 100000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.runner.api import run_evals_async
from assay.scoring.registry import create_scorer
from assay.types import Item

CONCURRENCY = 64


def make_items(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"i{i}", "input": f"q{i}", "expected_output": f"q{i}" if i % 2 else "other"}
        for i in range(n)
    ]


async def target(text: str) -> str:
    return text


async def floor_plain(rows: list[dict[str, Any]]) -> float:
    it = iter(rows)
    hits = 0

    async def worker() -> None:
        nonlocal hits
        for row in it:
            out = await target(row["input"])
            hits += out == row["expected_output"]

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - start


async def floor_scorer(rows: list[dict[str, Any]]) -> float:
    scorer = create_scorer("exact-match")
    items = [Item(**row) for row in rows]
    it = iter(items)

    async def worker() -> None:
        for item in it:
            out = await target(item.input)
            await scorer.run(input=item.input, output=out, ground_truth=item.expected_output)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - start


async def runner_memory(rows: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    run = await run_evals_async(
        rows, target, ["exact-match"], concurrency=CONCURRENCY, progress=False
    )
    elapsed = time.perf_counter() - start
    assert run.summary.results == len(rows), run.summary
    return elapsed


async def runner_stored(rows: list[dict[str, Any]], db: Path) -> float:
    from assay.operations.stored_runs import run_stored_async
    from assay.store import open_store

    with open_store(f"sqlite:///{db}") as store:
        start = time.perf_counter()
        run = await run_stored_async(
            rows, target, ["exact-match"], store=store, concurrency=CONCURRENCY, progress=False
        )
        elapsed = time.perf_counter() - start
        assert run.summary.results == len(rows), run.summary
        stored = sum(1 for _ in store.runs.score_rows(run.id))
        assert stored == len(rows), stored
    return elapsed


def child_memory(n: int, workdir: Path) -> tuple[float, float, float]:
    """Memory of a fresh process running the persisted workload on a stored dataset:
    (RSS high-water before the run, after the run, tracemalloc peak during the run), MiB.

    ``VmHWM`` is read from /proc (``ru_maxrss`` would include the parent's RSS at fork);
    tracemalloc sees Python and numpy allocations, not SQLite's page cache.
    """
    code = f"""
import asyncio, sys, tracemalloc
sys.path.insert(0, {str(Path(__file__).parent)!r})
from runner_overhead import target, CONCURRENCY, vm_hwm_mib
from assay.store import open_store
from assay.operations.stored_runs import run_dataset_async
from assay.types import Item

def items():
    for i in range({n}):
        yield Item(id=f"i{{i}}", input=f"q{{i}}", expected_output=f"q{{i}}" if i % 2 else "other")

with open_store("sqlite:///{workdir}/mem{n}.db") as store:
    store.datasets.create("bench")
    store.datasets.add_items("bench", items())
    before = vm_hwm_mib()
    tracemalloc.start()
    run = asyncio.run(run_dataset_async("bench", target, ["exact-match"], store=store,
                                        concurrency=CONCURRENCY, progress=False))
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    assert run.summary.results == {n}
print(before, vm_hwm_mib(), traced)
"""
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
    parser.add_argument("--memory-sizes", default="25000,50000,100000")
    args = parser.parse_args()
    rows = make_items(args.items)
    print(f"# runner overhead — {args.items:,} items, concurrency {CONCURRENCY}, exact-match")
    print(f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            "floor: plain asyncio": asyncio.run(floor_plain(rows)),
            "floor: asyncio + scorer.run": asyncio.run(floor_scorer(rows)),
            "run_evals (memory)": asyncio.run(runner_memory(rows)),
            "run_stored (SQLite)": asyncio.run(runner_stored(rows, Path(tmp) / "bench.db")),
        }
        floor = results["floor: plain asyncio"]
        print(f"{'mode':<30} {'seconds':>8} {'items/s':>10} {'µs/item over floor':>20}")
        for mode, seconds in results.items():
            rate = args.items / seconds
            over = (seconds - floor) / args.items * 1e6
            print(f"{mode:<30} {seconds:>8.2f} {rate:>10,.0f} {over:>20.1f}")
        print()
        header = f"{'persisted run (dataset)':<26} {'RSS before':>11} {'RSS after':>10}"
        print(f"{header} {'traced peak':>12}   (MiB)")
        for size in (int(x) for x in args.memory_sizes.split(",") if x):
            before, after, traced = child_memory(size, Path(tmp))
            print(f"{size:<26,} {before:>11.1f} {after:>10.1f} {traced:>12.1f}")
    print(json.dumps({k: round(args.items / v) for k, v in results.items()}))


if __name__ == "__main__":
    main()
