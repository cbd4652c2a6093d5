"""Client CPU per request of ``assay.models.http``: the transport alone, side by side.

Posts ``--requests`` chat-completions bodies through ``make_transport(base_url).post`` at
concurrency ``--concurrency`` against the mock server in a child process (100 ms latency,
so requests overlap as at a real endpoint), after ``--warmup`` untimed requests, and prints
the client's CPU time per request (``time.process_time`` of this process over the timed
requests: building the request, parsing the answer, the event loop) and the wall time.
Each repeat runs in a fresh process, so imports and pools start cold the same way.

It only uses ``make_transport``/``post``/``aclose``, which both the old hand-written client
and the aiohttp transport have: run it with ``PYTHONPATH`` pointing at either tree to
compare them on one machine in one sitting (issue 20)::

    PYTHONPATH=src .venv/bin/python benchmarks/http_client_cpu.py [--requests 3000]
        [--concurrency 32] [--repeats 3]

``--user-path OLD_SRC NEW_SRC`` compares two trees on the judge user path instead
(``judge_throughput.py``'s ``user_run``: ``run_evals`` with 1,000 items x ``faithfulness``
with ``reason="llm"`` at concurrency 32, 100 ms latency, start-up included, a fresh
process per run), alternating the trees run by run against one mock server, so both see
the same machine load; it prints each run's efficiency and client CPU per judge call, and
the ratio of the medians::

    .venv/bin/python benchmarks/http_client_cpu.py --user-path /tmp/old/src src --repeats 3

The CPU figure is sensitive to other processes on the machine (it is CPU time, not wall
time, but a loaded machine costs cache misses and context switches): compare figures taken
in the same run or minutes apart, and read the load average printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from assay.testing.openai_server import MockServerProcess

BODY = json.dumps(
    {
        "model": "mock-judge",
        "messages": [{"role": "user", "content": "Is the answer faithful to the context? " * 20}],
        "temperature": 0,
    }
).encode()
HEADERS = {
    "Authorization": "Bearer assay-no-key",
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Accept-Encoding": "gzip, deflate",
    "User-Agent": "assay/bench",
}


async def measure(base_url: str, requests: int, concurrency: int, warmup: int) -> dict[str, float]:
    from assay.models.http import make_transport

    transport = make_transport(base_url)
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            reply = await transport.post("/chat/completions", BODY, HEADERS)
            if reply.status != 200:
                raise SystemExit(f"HTTP {reply.status}: {reply.body[:200]!r}")

    await asyncio.gather(*(one() for _ in range(warmup)))
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(requests)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await transport.aclose()
    return {"cpu_ms": cpu / requests * 1000, "wall_s": wall}


def child(args: argparse.Namespace) -> None:
    result = asyncio.run(measure(args.base_url, args.requests, args.concurrency, args.warmup))
    print(json.dumps(result))


def user_path(old_src: str, new_src: str, repeats: int, items: int) -> None:
    """Alternate ``user_run`` between two source trees (the spawned children take this
    process's ``sys.path``, so the tree in front of it is the one they import)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import judge_throughput as jt

    trees = {"old": os.path.abspath(old_src), "new": os.path.abspath(new_src)}
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with jt.faulty_server(0, 0.0) as server:
        for _ in range(repeats):
            for label, tree in trees.items():
                sys.path.insert(0, tree)
                try:
                    run = jt.user_run(server.base_url, items)
                finally:
                    sys.path.remove(tree)
                efficiency = run["calls"] * jt.LATENCY_S / jt.CONCURRENCY / run["wall_s"]
                cpu = run["cpu_s"] / run["calls"] * 1000
                results[label].append({"eff": efficiency, "cpu": cpu, "load": run["load"]})
                print(
                    f"{label} ({tree}): {run['ready']}/{items} ready, wall {run['wall_s']:.2f} s, "
                    f"efficiency {efficiency:.3f}, client CPU {cpu:.2f} ms/call, "
                    f"load {run['load']:.1f}",
                    flush=True,
                )
    median = {
        k: {m: statistics.median(r[m] for r in v) for m in ("eff", "cpu")}
        for k, v in results.items()
    }
    for label in trees:
        print(
            f"{label}: median efficiency {median[label]['eff']:.3f}, "
            f"median client CPU {median[label]['cpu']:.2f} ms/call"
        )
    print(
        f"new/old: efficiency {median['new']['eff'] / median['old']['eff']:.3f}, "
        f"client CPU per call {median['new']['cpu'] / median['old']['cpu']:.2f}x"
    )


def main(args: argparse.Namespace) -> None:
    import assay.models.http as http

    server = MockServerProcess(latency_s=0.1).start()
    try:
        runs = []
        for _ in range(args.repeats):
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    server.base_url,
                    "--requests",
                    str(args.requests),
                    "--concurrency",
                    str(args.concurrency),
                    "--warmup",
                    str(args.warmup),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        server.stop()
    cpu = [r["cpu_ms"] for r in runs]
    walls = " / ".join(f"{r['wall_s']:.2f}" for r in runs)
    print(f"client: {http.__file__}")
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}")
    print(
        f"{args.requests} requests at concurrency {args.concurrency}, 100 ms latency: "
        f"client CPU ms/request {' / '.join(f'{c:.3f}' for c in cpu)} "
        f"(median {statistics.median(cpu):.3f}); wall s "
        f"{walls}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", metavar="BASE_URL", dest="base_url", default=None)
    parser.add_argument("--user-path", nargs=2, metavar=("OLD_SRC", "NEW_SRC"), default=None)
    parser.add_argument("--items", type=int, default=1000, help="items per user-path run")
    parsed = parser.parse_args()
    if parsed.user_path:
        user_path(*parsed.user_path, parsed.repeats, parsed.items)
    elif parsed.base_url:
        child(parsed)
    else:
        main(parsed)
