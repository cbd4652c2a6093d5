"""Live scoring seen from a web client: request latency of a real FastAPI app under uvicorn
with ``assay.monitor`` off, at rate 0.1 and at rate 1.0 (a judge answering in 1 s on a
loopback mock, plus exact-match), side by side in one run.

Run: ``python benchmarks/live_http.py [--requests 1000]``

Three copies of the same app run as separate uvicorn processes (monitor off / 0.1 / 1.0,
each with its own SQLite file); one client sends the same sequential GET to each in turn,
so all three see the same machine load. Reported per variant: p50 and p99 of the request
latency in ms and their difference to "off", and what the monitor counted (every sampled
call is either scored, or dropped/failed and counted: the caller never waits for the judge).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from assay.testing.openai_server import MockOpenAIServer

SRC = Path(__file__).resolve().parents[1] / "src"

APP = """
import contextlib, sys
import uvicorn
from fastapi import FastAPI
import assay
from assay.models.openai_compat import OpenAICompatibleModel
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step

rate = float(sys.argv[3])

def answer(q: str) -> str:
    return q[::-1]

if rate >= 0:
    judge = Scorer(
        "judge",
        judge=JudgeConfig(
            model=OpenAICompatibleModel("gpt-4o-mini", base_url=sys.argv[2], timeout_s=30.0),
            instructions="Rate the answer.",
        ),
    ).score(judge_step(lambda ctx: f"Answer: {ctx.call.output}"))
    answer = assay.monitor(answer, scorers=[judge, "exact-match"], rate=rate, name="bench")

@contextlib.asynccontextmanager
async def lifespan(app):
    yield
    if rate >= 0:
        answer.monitor.close()

app = FastAPI(lifespan=lifespan)

@app.get("/ask")
def ask(q: str) -> dict[str, str]:
    return {"answer": answer(q)}

@app.get("/counts")
def counts() -> dict:
    return answer.monitor.snapshot() if rate >= 0 else {}

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(
    folder: Path, label: str, rate: float, judge_url: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    script = folder / "app.py"
    script.write_text(APP)
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "ASSAY_DATABASE_URL": f"sqlite:///{folder / f'{label}.db'}",
    }
    proc = subprocess.Popen(
        [sys.executable, str(script), str(port), judge_url, str(rate)], env=env, cwd=folder
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/ask", params={"q": "warm"}, timeout=1.0).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the {label} app did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests per variant")
    args = parser.parse_args()
    variants = {"off": -1.0, "rate 0.1": 0.1, "rate 1.0": 1.0}
    with MockOpenAIServer(latency_s=1.0) as judge, tempfile.TemporaryDirectory() as tmp:
        procs: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
        try:
            for label, rate in variants.items():
                folder = Path(tmp) / label.replace(" ", "_")
                folder.mkdir()
                procs[label] = start(folder, label, rate, judge.base_url)
            times: dict[str, list[float]] = {label: [] for label in variants}
            with httpx.Client(timeout=30.0) as client:
                for i in range(args.requests + 50):
                    for label, (_, base) in procs.items():
                        began = time.perf_counter()
                        reply = client.get(f"{base}/ask", params={"q": f"question {i}"})
                        elapsed = (time.perf_counter() - began) * 1000.0
                        if reply.status_code != 200:
                            raise SystemExit(f"{label}: HTTP {reply.status_code}")
                        if i >= 50:  # warm-up left out
                            times[label].append(elapsed)
                counts = {
                    label: client.get(f"{base}/counts").json() for label, (_, base) in procs.items()
                }
        finally:
            for proc, _ in procs.values():
                proc.terminate()
                proc.wait(timeout=30)
    print(f"# live scoring through a real web app ({args.requests} requests per variant)\n")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}\n")
    print("| variant | p50 ms | p99 ms | added p50 ms | added p99 ms |")
    print("|---|---|---|---|---|")
    base50, base99 = _quantiles(times["off"])
    for label in variants:
        p50, p99 = _quantiles(times[label])
        print(f"| {label} | {p50:.3f} | {p99:.3f} | {p50 - base50:+.3f} | {p99 - base99:+.3f} |")
    print("\nmonitor counts at the end (before the final flush):")
    for label in ("rate 0.1", "rate 1.0"):
        print(f"- {label}: {json.dumps(counts[label], sort_keys=True)[:400]}")


def _quantiles(values: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(values, n=100)
    return statistics.median(values), cuts[98]


if __name__ == "__main__":
    main()
