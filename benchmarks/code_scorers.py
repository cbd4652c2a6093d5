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
        [--scorers completeness,tone] [--repeats 3]

With ``--repeats N`` the whole measurement (assay, then the reference) runs N times back to back
and the table gives the median items/s of each side (each repetition's figures and load
average are printed first): on a shared machine the load moves between the two sides' runs,
and the median of interleaved repetitions is the fairer ratio.

The STS-B file comes from ``../shared/data/stsb/stsb_test.jsonl`` when present; otherwise
pass ``--data`` (any JSONL with ``sentence1``/``sentence2``; STS-B is on the Hugging Face hub
as ``sentence-transformers/stsb``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import resource
import shutil
import statistics
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


def _median_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One result per scorer from repetitions: median rates, largest RSS, first mean score."""
    merged = dict(results[0])
    for key in ("items_per_second", "concurrent_items_per_second"):
        if key in merged:
            merged[key] = statistics.median(r[key] for r in results)
    merged["peak_rss_mb"] = max(r["peak_rss_mb"] for r in results)
    return merged


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
    parser.add_argument("--repeats", type=int, default=1, help="interleaved repetitions")
    args = parser.parse_args()
    selected = [name.strip() for name in args.scorers.split(",") if name.strip()]
    unknown = sorted(set(selected) - set(SCORERS))
    if unknown or not selected:
        sys.exit(f"unknown scorer(s): {', '.join(unknown)}; choose from {', '.join(SCORERS)}")
    if not args.data.exists():
        sys.exit(f"{args.data} not found: pass --data PATH (JSONL with sentence1/sentence2)")
    pairs = load_pairs(args.data, args.pairs)

    context = multiprocessing.get_context("spawn")
    our_runs: list[dict[str, dict[str, Any]]] = []
    ref_runs: list[dict[str, Any]] = []
    reference: dict[str, Any] | None = None
    loads: list[float] = [os.getloadavg()[0]]
    for repeat in range(max(1, args.repeats)):
        ours_now: dict[str, dict[str, Any]] = {}
        for type_id in selected:
            with context.Pool(1) as pool:
                ours_now[type_id] = pool.apply(_measure_in_child, ((type_id, pairs),))
        our_runs.append(ours_now)
        reference = None if args.no_node else run_reference(args.pairs, args.data, selected)
        ref_runs.append((reference or {}).get("results", {}))
        loads.append(os.getloadavg()[0])
        if args.repeats > 1:
            parts = []
            for type_id in selected:
                ref_now = ref_runs[-1].get(type_id)
                mine_rate = ours_now[type_id]["items_per_second"]
                parts.append(
                    f"{type_id} {mine_rate:,.0f}"
                    + (
                        f" vs {ref_now['items_per_second']:,.0f}"
                        f" ({mine_rate / ref_now['items_per_second']:.1f}x)"
                        if ref_now
                        else ""
                    )
                )
            print(
                f"repeat {repeat + 1}, load {loads[-2]:.2f} -> {loads[-1]:.2f}: " + "; ".join(parts)
            )
    ours = {t: _median_of([run[t] for run in our_runs]) for t in selected}
    ref_results: dict[str, Any] = {
        t: _median_of([run[t] for run in ref_runs])
        for t in selected
        if all(t in run for run in ref_runs)
    }

    print(
        f"\ncode scorers over {args.pairs} STS-B pairs ({args.data.name}), one process, "
        f"sequential; {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {multiprocessing.cpu_count()} cores"
        + (f"; reference: node {reference['node']}, @mastra/evals 1.10.2" if reference else "")
        + f"; load average {min(loads):.2f}-{max(loads):.2f}"
        + (f"; median of {len(our_runs)} repetitions" if len(our_runs) > 1 else "")
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
