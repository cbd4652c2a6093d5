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
    parsed = parser.parse_args()
    if parsed.base_url:
        child(parsed)
    else:
        main(parsed)
