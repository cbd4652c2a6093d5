"""Scale-out figures of the Ray backend (issue 21), side by side in one run.

1. Trivial target + exact-match over N items (default 100,000): items/s of a local stored
   run and of Ray runs with 1 and 2 workers, on the same store; Ray's overhead per item.
2. The judge path through Ray: a 100 ms mock judge, 2 workers x 16 in flight (32 in
   all), wall time against the bound (items x 0.1 s / 32).
3. Claim throughput: 8 threads claiming (and completing) batches of units from the store
   at once, units/s; the number docs/scale-out.md extrapolates from.

Usage::

    PYTHONPATH=src python benchmarks/scale_out.py [--items 100000] [--db URL]

``--db``: a PostgreSQL URL (what a cluster uses), default an SQLite file in a temporary
folder. Starts a local Ray (2 CPUs, no dashboard). Nothing here is a test: numbers only.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from assay.operations.ray_backend import connect, shutdown
from assay.operations.stored_runs import run_stored
from assay.store import Store, open_store
from assay.types import Item, ItemResult, RunInfo, TargetSpec


def upper(input: str) -> str:
    return input.upper()


def importable_upper() -> Callable[[str], str]:
    """``upper`` as the module ``scale_out`` (not ``__main__``: the Ray backend refuses what
    workers cannot import by name); the workers find it through ``PYTHONPATH``."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    shout: Callable[[str], str] = importlib.import_module("scale_out").upper
    return shout


def items(n: int) -> list[dict[str, str]]:
    return [{"id": f"i{i}", "input": f"q{i}", "expected_output": f"Q{i}"} for i in range(n)]


def timed_run(store: Store, n: int, **options: object) -> float:
    started = time.perf_counter()
    target = importable_upper()
    result = run_stored(items(n), target, ["exact-match"], store=store, progress=False, **options)
    elapsed = time.perf_counter() - started
    assert result.record.status == "completed", result.record.status
    assert store.runs.completed_count(result.record.info.id) == n
    return elapsed


def claim_throughput(store: Store, units: int, claimers: int, batch: int) -> float:
    """Units/s that ``claimers`` threads claim and complete (empty results) at once."""
    run_id = uuid.uuid4().hex
    store.runs.create(RunInfo(id=run_id, target=TargetSpec(kind="callable", label="bench")))
    store.work_units.seed(run_id, ((i, Item(id=f"i{i}", input=f"q{i}"), 0) for i in range(units)))

    def claimer(owner: str) -> None:
        while True:
            got = store.work_units.claim(run_id, owner, batch)
            if not got:
                return
            now = time.time()
            results = [
                ItemResult(
                    item_id=item.id,
                    repeat=repeat,
                    position=position,
                    input=item.input,
                    output=item.input,
                    started_at=now,
                    completed_at=now,
                )
                for position, item, repeat in got
            ]
            store.work_units.complete(run_id, owner, results)

    threads = [threading.Thread(target=claimer, args=(f"c{k}",)) for k in range(claimers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    assert store.runs.completed_count(run_id) == units
    return units / elapsed


def judge_path(store: Store, n: int) -> None:
    """A judge against a 100 ms mock (another process), 2 workers x 16 in flight = 32:
    wall time against the bound n x 0.1 s / 32."""
    from assay.testing.openai_server import MockServerProcess

    with MockServerProcess(latency_s=0.1) as server:
        judge = {
            "type": "toxicity",
            "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
        }
        started = time.perf_counter()
        result = run_stored(
            items(n),
            importable_upper(),
            [judge],
            store=store,
            progress=False,
            concurrency=16,
            backend="ray",
            workers=2,
        )
        elapsed = time.perf_counter() - started
    assert result.record.status == "completed"
    bound = n * 0.1 / 32
    print(
        f"judge path     {n} items, 100 ms mock, 32 in flight: {elapsed:.1f} s, bound "
        f"{bound:.1f} s, ratio {bound / elapsed:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--db", default=None)
    parser.add_argument("--claim-units", type=int, default=20_000)
    parser.add_argument("--judge-items", type=int, default=1280)
    parser.add_argument("--only", choices=("all", "throughput", "judge", "claims"), default="all")
    parser.add_argument("--judge-repeats", type=int, default=1)
    args = parser.parse_args()
    importable_upper()  # PYTHONPATH for the Ray workers, before Ray starts
    folder = Path(tempfile.mkdtemp(prefix="assay-scale-out-"))
    url = args.db or f"sqlite:///{folder / 'bench.db'}"
    n = args.items
    with open_store(url) as store:
        try:
            if args.only in ("all", "throughput"):
                throughput(store, n, args.concurrency)
            if args.only in ("all", "judge"):
                connect(None, 2)  # Ray start-up (~10 s here) is not counted
                for _ in range(args.judge_repeats):
                    judge_path(store, args.judge_items)
        finally:
            shutdown()
        if args.only in ("all", "claims"):
            for batch in (32, 256):
                rate = claim_throughput(store, args.claim_units, 8, batch)
                print(f"claims: 8 claimers, batch {batch:3d}: {rate:9.0f} units/s claimed+stored")


def throughput(store: Store, n: int, concurrency: int) -> None:
    """Items/s of a local run and of Ray runs with 1 and 2 workers, side by side."""
    print(f"store: {store.dialect}; {n} items, trivial target, exact-match")
    local = timed_run(store, n, concurrency=concurrency)
    print(f"local          {n / local:9.0f} items/s  ({local:.1f} s)")
    connect(None, 2)  # Ray start-up (~10 s here) is not counted in the figures below
    for workers in (1, 2):
        elapsed = timed_run(store, n, concurrency=concurrency, backend="ray", workers=workers)
        extra_us = (elapsed - local) / n * 1e6
        print(
            f"ray {workers} worker{'s' if workers > 1 else ' '}  {n / elapsed:9.0f} items/s  "
            f"({elapsed:.1f} s; {extra_us:+.0f} µs/item over local, Ray already started)"
        )


if __name__ == "__main__":
    main()
