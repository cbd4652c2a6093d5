"""Prompt optimization: how much of the wall time is spent waiting on models (issue 13).

The optimizer must not serialize what can run in parallel: every GEPA evaluation is one
stored run executed by the runner's concurrent engine. This benchmark runs a real
optimization (``assay.optimize``) against the mock OpenAI-compatible server in a child
process (100 ms latency, so it does not share the GIL with the code under test), with the
real model stack (``openai-compatible/...``: reliability, adaptive limit; the cache is off so
every call waits), an exact-match and a check-excludes scorer, a real SQLite store.

Measured:

- **model-wait share** = (time during which at least one model call is in flight) / wall
  time of ``optimize``. Goal ≥ 0.8 at concurrency 16.
- **bookkeeping per metric call** = (wall − model-wait time) / metric calls: what assay
  adds per evaluated example (planning, stored run rows, result writes, scoring, GEPA).
- **mean calls in flight** while waiting, against the batch sizes: whether a batch really
  runs concurrently.

The mock answers "ok" to everything, so no candidate beats the seed: every iteration pays
the parent minibatch, one reflection call and the child minibatch, until the budget ends.

Process start-up (imports of the scorer registry and the HTTP client, the first
connection) is warmed up before the clock starts: it is paid once per process, not per
optimization.

Run: ``.venv/bin/python benchmarks/optimize.py [--metric-calls 400] [--concurrency 16]
[--minibatch 16] [--latency 0.1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ["ASSAY_CACHE"] = "off"
os.environ.setdefault("OPENAI_API_KEY", "benchmark")

from assay.models.base import ChatMessage, Model, ModelResponse, ModelSettings
from assay.models.resolve import resolve_model
from assay.optimize import optimize
from assay.runner.scorer_set import build_scorers
from assay.scoring.sync import run_sync
from assay.store import open_store
from assay.testing.openai_server import MockServerProcess


class TimedModel:
    """A ``Model`` that records when each call was in flight."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def provider(self) -> str | None:
        return getattr(self.inner, "provider", None)

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        start = time.perf_counter()
        try:
            return await self.inner.generate(messages, schema=schema, settings=settings)
        finally:
            with self._lock:
                self.spans.append((start, time.perf_counter()))


def busy_time(spans: list[tuple[float, float]]) -> float:
    """Length of the union of the intervals."""
    total, end = 0.0, float("-inf")
    for s, e in sorted(spans):
        if s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def rows(n: int, start: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"r{i}",
            "input": f"Customer {i}: where is order {10000 + i}?",
            "expected_output": str(10000 + i),
        }
        for i in range(start, start + n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metric-calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--minibatch", type=int, default=16)
    parser.add_argument("--val", type=int, default=32)
    parser.add_argument("--train", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, MockServerProcess(latency_s=args.latency) as server:
        folder = Path(tmp)
        for name, part in (("train", rows(args.train, 0)), ("val", rows(args.val, 1000))):
            (folder / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in part))
        task = TimedModel(resolve_model("openai-compatible/task", base_url=server.base_url))
        reflect = TimedModel(resolve_model("openai-compatible/reflect", base_url=server.base_url))
        config = {
            "candidate": {"instructions": "Answer the customer.", "format": "Be brief."},
            "train": str(folder / "train.jsonl"),
            "val": str(folder / "val.jsonl"),
            "scorers": [
                {"type": "exact-match"},
                {"type": "check-excludes", "params": {"unwanted": "sorry"}},
            ],
            "budget": {"max_metric_calls": args.metric_calls},
            "minibatch_size": args.minibatch,
            "concurrency": args.concurrency,
            "run_dir": str(folder / "gepa"),
        }
        # warm-up, not timed: the scorer registry's imports and the HTTP client's first
        # connection are once per process, not per optimization
        build_scorers(config["scorers"])
        for model in (task.inner, reflect.inner):
            run_sync(lambda m=model: m.generate([ChatMessage(role="user", content="hi")]))
        with open_store(f"sqlite:///{folder / 'assay.db'}") as store:
            started = time.perf_counter()
            result = optimize(config, task_model=task, reflection_model=reflect, store=store)
            wall = time.perf_counter() - started
            runs = len(store.optimizations.evaluations(result.optimization_id))
        spans = task.spans + reflect.spans
        waiting = busy_time(spans)
        in_flight = sum(e - s for s, e in spans) / waiting if waiting else 0.0
        mean_call = sum(e - s for s, e in spans) / len(spans)
        report = {
            "metric_calls": result.metric_calls,
            "iterations": result.iterations,
            "stored_runs": runs,
            "task_calls": len(task.spans),
            "reflection_calls": len(reflect.spans),
            "wall_s": round(wall, 2),
            "waiting_s": round(waiting, 2),
            "model_wait_share": round(waiting / wall, 3),
            "bookkeeping_ms_per_metric_call": round(
                (wall - waiting) / result.metric_calls * 1000, 2
            ),
            "mean_calls_in_flight": round(in_flight, 1),
            "mean_call_s": round(mean_call, 3),
            "latency_s": args.latency,
        }
        for key, value in report.items():
            print(f"{key}: {value}")
        print(f"goal: model_wait_share >= 0.8 at concurrency {args.concurrency}")


if __name__ == "__main__":
    main()
