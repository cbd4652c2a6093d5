"""Live scoring overhead: what ``assay.monitor`` adds to each call, how fast its worker
scores, and whether its memory stays flat.

Run: ``PYTHONPATH=src python benchmarks/live.py [--calls 20000] [--memory 100000]``

1. Added latency per call, side by side in one run: the same function called off
   (unwrapped), and monitored at rate 0, 0.1 and 1.0 (a code scorer, a SQLite file), and
   at rate 1.0 with a judge answering in 1 s (loopback mock). The function itself does
   ~20 µs of work, so the figure is the monitor's share. Reported: p50 and p99 per call in
   µs, and the difference to "off".
2. Worker throughput: observations scored and stored per second at rate 1.0 (exact-match,
   batched writes), measured from the first call to ``flush()`` returning.
3. Memory over ``--memory`` observations at rate 1.0 with a bounded queue: RSS sampled every
   10% of the way; flat means the queue bound and the batched writes hold.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.live import monitor
from assay.models.openai_compat import OpenAICompatibleModel
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step
from assay.testing.openai_server import MockOpenAIServer


def work(text: str) -> str:
    """~20 µs of pure-Python work: the "application"."""
    total = 0
    for ch in text * 20:
        total += ord(ch)
    return f"{text}:{total}"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def per_call_us(fn: Callable[[str], Any], calls: int) -> list[float]:
    times = []
    clock = time.perf_counter_ns
    for i in range(calls):
        text = f"question number {i}"
        started = clock()
        fn(text)
        times.append((clock() - started) / 1000)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--memory", type=int, default=100_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assay-live-bench-"))
    print(f"cpus {os.cpu_count()}, load {Path('/proc/loadavg').read_text().split()[:3]}")

    variants: dict[str, Callable[[str], Any]] = {"off": work}
    monitors = []
    for rate in (0.0, 0.1, 1.0):
        wrapped = monitor(
            work,
            scorers=["exact-match"],
            rate=rate,
            store=f"sqlite:///{tmp / f'rate{rate}.db'}",
            name=f"bench-{rate}",
            queue_size=args.calls,
        )
        variants[f"rate {rate}"] = wrapped
        monitors.append(wrapped.monitor)
    server = MockOpenAIServer(latency_s=1.0).start()
    slow = Scorer(
        "judge",
        judge=JudgeConfig(
            model=OpenAICompatibleModel("gpt-4o-mini", base_url=server.base_url),
            instructions="Rate the answer.",
        ),
    ).score(judge_step(lambda ctx: f"Answer: {ctx.call.output}"))
    wrapped = monitor(
        work,
        scorers=[slow],
        rate=1.0,
        store=f"sqlite:///{tmp / 'judge.db'}",
        name="bench-judge",
        concurrency=32,
    )
    variants["rate 1.0, judge answering in 1 s"] = wrapped
    monitors.append(wrapped.monitor)
    # interleaved rounds so load changes hit every variant alike
    samples: dict[str, list[float]] = {name: [] for name in variants}
    rounds = 10
    for _ in range(rounds):
        for name, fn in variants.items():
            samples[name] += per_call_us(fn, args.calls // rounds)
    base50 = statistics.median(samples["off"])
    base99 = pct(samples["off"], 0.99)
    print("\n| variant | p50 µs | p99 µs | added p50 µs | added p99 µs |")
    print("|---|---|---|---|---|")
    for name, values in samples.items():
        p50, p99 = statistics.median(values), pct(values, 0.99)
        print(f"| {name} | {p50:.1f} | {p99:.1f} | {p50 - base50:+.1f} | {p99 - base99:+.1f} |")
    for mon in monitors:
        mon.close(timeout_s=30)
    print("judge variant:", monitors[-1].snapshot()["counts"])
    server.stop()

    # 2. worker throughput at rate 1.0
    n = args.calls
    wrapped = monitor(
        work,
        scorers=["exact-match"],
        rate=1.0,
        store=f"sqlite:///{tmp / 'throughput.db'}",
        name="bench-throughput",
        queue_size=n,
    )
    started = time.perf_counter()
    for i in range(n):
        wrapped(f"q{i}")
    wrapped.monitor.flush(300)
    elapsed = time.perf_counter() - started
    counts = wrapped.monitor.snapshot()["counts"]
    wrapped.monitor.close()
    print(f"\nworker: {counts['scored']} scored+stored in {elapsed:.2f} s = {n / elapsed:,.0f}/s")

    # 3. memory over many observations, bounded queue (drops counted, never blocks)
    wrapped = monitor(
        work,
        scorers=["exact-match"],
        rate=1.0,
        store=f"sqlite:///{tmp / 'memory.db'}",
        name="bench-memory",
        queue_size=1000,
    )
    marks = []
    step = max(1, args.memory // 10)
    for i in range(args.memory):
        wrapped(f"m{i}")
        if (i + 1) % step == 0:
            marks.append(rss_mb())
    wrapped.monitor.flush(300)
    counts = wrapped.monitor.snapshot()["counts"]
    wrapped.monitor.close()
    print(f"\nmemory over {args.memory:,} observations: RSS MB at each 10%: ")
    print(" ".join(f"{m:.0f}" for m in marks))
    print(f"scored {counts['scored']}, dropped {counts['dropped']}, observed {counts['observed']}")


if __name__ == "__main__":
    main()
