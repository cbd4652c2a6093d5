"""Scale-out figures of the Ray backend (issue 21), side by side in one run.

1. Trivial target + exact-match over N items (default 100,000): items/s of a local stored
   run and of Ray runs with 1 and 2 workers, on the same store; Ray's overhead per item.
2. The judge path through Ray: a 100 ms mock judge, 2 workers x 16 in flight (32 in
   all), wall time against the bound (judge calls x 0.1 s / 32), next to the local stored
   run and the in-memory ``run_evals`` at 32 in flight.
3. The limiter actor: model calls per second one ``RunLimits`` actor grants (slot and
   outcome, no model behind), from 2 worker processes x 64 in flight.
4. Claim throughput: 8 threads claiming (and completing) batches of units from the store
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


def judge_path(store: Store, n: int, *, cold: bool = False) -> None:
    """A judge against a 100 ms mock (another process) with 32 calls in flight: Ray with
    2 workers x 16 under the run-wide limiter, the local stored run at 32, and the
    in-memory ``run_evals`` at 32 (the yardstick), one after the other at the same load.

    The bound is what the mock answered: calls x 0.1 s / 32 (toxicity makes 2 calls per
    item, the verdicts and the reason; counting items instead halves the bound). ``busy``
    is the span from the mock's first to its last request: wall - busy is the fixed cost
    (Ray task start, seeding, the summary), busy alone the steady state. ``cold``: the
    first run after Ray started, whose worker processes start and import assay inside it
    (~5-7 s on the loaded 2-core machine); later runs reuse them, as a long-lived driver or
    cluster does."""
    import assay
    from assay.testing.openai_server import MockServerProcess

    lines = []
    for name, options in (
        ("ray", {"concurrency": 16, "backend": "ray", "workers": 2}),
        ("local stored", {"concurrency": 32}),
        ("run_evals", {"concurrency": 32}),
    ):
        with MockServerProcess(latency_s=0.1) as server:  # a fresh one: its counters
            judge = {
                "type": "toxicity",
                "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
            }
            started = time.perf_counter()
            if name == "run_evals":
                memory = assay.run_evals(
                    items(n), importable_upper(), [judge], progress=False, **options
                )
                assert len(memory.results) == n
            else:
                result = run_stored(
                    items(n), importable_upper(), [judge], store=store, progress=False, **options
                )
                assert result.record.status == "completed"
            wall = time.perf_counter() - started
            stats = server.stats()
        calls = stats["requests"]
        busy = stats["last_request_at"] - stats["first_request_at"]
        bound = calls * 0.1 / 32
        lines.append(
            f"  {name:12s} {wall:5.1f} s, ratio {bound / wall:.2f} (bound {bound:.1f} s, "
            f"{calls} calls; requests over {busy:.1f} s, fixed {wall - busy:.1f} s)"
        )
    load = os.getloadavg()[0]
    when = "first run after Ray start, cold workers" if cold else "workers warm"
    print(f"judge path     {n} items, 100 ms mock, 32 in flight, load {load:.1f} ({when}):")
    print("\n".join(lines))


def _limiter_client(actor: object, calls: int, in_flight: int) -> float:
    """Runs on a Ray worker: ``calls`` slot + outcome round trips, ``in_flight`` at once."""
    import asyncio

    from assay.operations.ray_limits import RemoteLimiter

    async def go() -> float:
        limiter = RemoteLimiter(actor, "http://bench/v1")
        left = iter(range(calls))

        async def lane() -> None:
            for _ in left:
                async with limiter.slot() as ticket:
                    limiter.on_success(ticket)

        started = time.perf_counter()
        await asyncio.gather(*(lane() for _ in range(in_flight)))
        return time.perf_counter() - started

    return asyncio.run(go())


def limiter_throughput(clients: int = 2, calls: int = 3000, in_flight: int = 64) -> None:
    """Model calls per second one ``RunLimits`` actor grants (slot + outcome, no model
    behind): what bounds a run's calls through one limiter."""
    import ray

    from assay.operations.ray_limits import RunLimits

    actor = ray.remote(num_cpus=0, max_concurrency=100_000)(RunLimits).remote(10_000)
    ray.get(actor.stats.remote(), timeout=60)  # started
    task = ray.remote(num_cpus=1)(_limiter_client)
    warm = ray.get([task.remote(actor, 200, 8) for _ in range(clients)], timeout=300)
    del warm
    started = time.perf_counter()
    ray.get([task.remote(actor, calls, in_flight) for _ in range(clients)], timeout=600)
    elapsed = time.perf_counter() - started
    total = clients * calls
    messages = ray.get(actor.stats.remote(), timeout=60)["messages"]
    print(
        f"limiter actor  {total / elapsed:9.0f} calls/s granted ({clients} worker processes x "
        f"{in_flight} in flight, {total} calls, {elapsed:.1f} s; {messages} actor messages "
        "in all, warm-up included)"
    )
    ray.kill(actor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--db", default=None)
    parser.add_argument("--claim-units", type=int, default=20_000)
    parser.add_argument("--judge-items", type=int, default=1280)
    parser.add_argument(
        "--only", choices=("all", "throughput", "judge", "limiter", "claims"), default="all"
    )
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
                for repeat in range(args.judge_repeats):
                    judge_path(store, args.judge_items, cold=repeat == 0)
            if args.only in ("all", "limiter"):
                connect(None, 2)
                limiter_throughput()
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
