"""Throughput and peak memory of every code scorer, against the reference implementation.

For each code scorer: items per second in one process, one item at a time (``await
scorer.run(...)`` in a plain loop) and with 64 items in flight (``asyncio.gather``; this is
how the runner drives scorers, and lets completeness batch its spaCy calls), and peak RSS,
over STS-B sentence pairs (sentence1 as the input, sentence2 as the output, built in the
reference's agent message shape). Each scorer
runs in a fresh subprocess so its peak memory is its own. In the same run, when ``node`` is
available, the reference JavaScript package (``@mastra/evals`` 1.10.2, pinned in
``benchmarks/reference_js``) scores the same pairs and the ratio is printed, with both mean
scores as a parity cross-check.

Usage::

    .venv/bin/python benchmarks/code_scorers.py [--pairs 2000] [--data PATH] [--no-node]
        [--scorers completeness,tone]

The STS-B file comes from ``../shared/data/stsb/stsb_test.jsonl`` when present; otherwise
pass ``--data`` (any JSONL with ``sentence1``/``sentence2``; STS-B is on the Hugging Face hub
as ``sentence-transformers/stsb``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "stsb" / "stsb_test.jsonl"
REFERENCE_DIR = ROOT / "benchmarks" / "reference_js"

SCORERS: dict[str, dict[str, Any]] = {
    "completeness": {},
    "content-similarity": {},
    "keyword-coverage": {},
    "textual-difference": {},
    "tone": {},
    "tool-call-accuracy-code": {"expected_tool": "search"},
}
WARMUP = 50
CONCURRENCY = 64


def load_pairs(path: Path, n: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pairs = [(r["sentence1"], r["sentence2"]) for r in rows]
    return [pairs[i % len(pairs)] for i in range(n)]


def build_runs(type_id: str, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    from assay.testing.runs import create_test_message, create_tool_invocation

    runs = []
    for index, (first, second) in enumerate(pairs):
        tools = None
        if type_id == "tool-call-accuracy-code":
            tools = [create_tool_invocation(f"call-{index}", "search", {"q": first}, result={})]
        runs.append(
            {
                "input": {
                    "inputMessages": [create_test_message(first, "user")],
                    "rememberedMessages": [],
                    "systemMessages": [],
                    "taggedSystemMessages": {},
                },
                "output": [create_test_message(second, "assistant", tool_invocations=tools)],
            }
        )
    return runs


def measure(type_id: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Runs in a fresh subprocess: time one scorer over all pairs."""
    import assay

    scorer = assay.create_scorer(type_id, **SCORERS[type_id])
    runs = build_runs(type_id, pairs)

    async def loop() -> tuple[float, float, int]:
        for run in runs[:WARMUP]:
            await scorer.run(**run)
        total = 0.0
        errors = 0
        started = time.perf_counter()
        for run in runs:
            result = await scorer.run(**run)
            if result.score is None:
                errors += 1
            else:
                total += result.score
        return time.perf_counter() - started, total, errors

    async def concurrent_loop() -> float:
        started = time.perf_counter()
        for start in range(0, len(runs), CONCURRENCY):
            await asyncio.gather(*(scorer.run(**run) for run in runs[start : start + CONCURRENCY]))
        return time.perf_counter() - started

    seconds, total, errors = asyncio.run(loop())
    concurrent_seconds = asyncio.run(concurrent_loop())
    scored = len(runs) - errors
    return {
        "items": len(runs),
        "seconds": seconds,
        "items_per_second": len(runs) / seconds,
        "concurrent_items_per_second": len(runs) / concurrent_seconds,
        "mean_score": total / scored if scored else None,
        "errors": errors,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _measure_in_child(args: tuple[str, list[tuple[str, str]]]) -> dict[str, Any]:
    return measure(*args)


def run_reference(n: int, data: Path, scorers: list[str]) -> dict[str, Any] | None:
    node = shutil.which("node")
    if node is None:
        print("node not found: skipping the reference run", file=sys.stderr)
        return None
    if not (REFERENCE_DIR / "node_modules").exists():
        print("installing the reference package (npm ci) ...", file=sys.stderr)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REFERENCE_DIR, check=True)
    proc = subprocess.run(
        [node, "bench.mjs", "--pairs", str(n), "--data", str(data), "--scorers", ",".join(scorers)],
        cwd=REFERENCE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-node", action="store_true", help="skip the reference run")
    parser.add_argument(
        "--scorers", default=",".join(SCORERS), help="comma-separated subset (default: all)"
    )
    args = parser.parse_args()
    selected = [name.strip() for name in args.scorers.split(",") if name.strip()]
    unknown = sorted(set(selected) - set(SCORERS))
    if unknown or not selected:
        sys.exit(f"unknown scorer(s): {', '.join(unknown)}; choose from {', '.join(SCORERS)}")
    if not args.data.exists():
        sys.exit(f"{args.data} not found: pass --data PATH (JSONL with sentence1/sentence2)")
    pairs = load_pairs(args.data, args.pairs)

    context = multiprocessing.get_context("spawn")
    ours: dict[str, dict[str, Any]] = {}
    for type_id in selected:
        with context.Pool(1) as pool:
            ours[type_id] = pool.apply(_measure_in_child, ((type_id, pairs),))
    reference = None if args.no_node else run_reference(args.pairs, args.data, selected)
    ref_results: dict[str, Any] = (reference or {}).get("results", {})

    print(
        f"\ncode scorers over {args.pairs} STS-B pairs ({args.data.name}), one process, "
        f"sequential; {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {multiprocessing.cpu_count()} cores"
        + (f"; reference: node {reference['node']}, @mastra/evals 1.10.2" if reference else "")
    )
    header = (
        f"{'scorer':<26}{'assay items/s':>14}{'ref items/s':>12}{'ratio':>8}"
        f"{'assay c=64':>12}{'ratio':>8}"
        f"{'assay RSS MB':>14}{'ref RSS MB':>12}{'assay mean':>12}{'ref mean':>12}"
    )
    print(header)
    print("-" * len(header))
    for type_id, mine in ours.items():
        ref = ref_results.get(type_id)
        ref_rate = ref["items_per_second"] if ref else None
        ratio = f"{mine['items_per_second'] / ref_rate:.1f}x" if ref_rate else "—"
        rate_c = mine["concurrent_items_per_second"]
        ratio_c = f"{rate_c / ref_rate:.1f}x" if ref_rate else "—"
        ref_rate_text = f"{ref_rate:,.0f}" if ref_rate else "—"
        ref_rss = f"{ref['peak_rss_mb']:.0f}" if ref else "—"
        ref_mean = f"{ref['mean_score']:.6f}" if ref else "—"
        print(
            f"{type_id:<26}{mine['items_per_second']:>14,.0f}{ref_rate_text:>12}{ratio:>8}"
            f"{rate_c:>12,.0f}{ratio_c:>8}"
            f"{mine['peak_rss_mb']:>14.0f}{ref_rss:>12}{mine['mean_score']:>12.6f}{ref_mean:>12}"
        )


if __name__ == "__main__":
    main()
