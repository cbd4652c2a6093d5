"""Runner overhead of two source trees, interleaved in one session: is a change a regression?

Each round runs, for each tree in turn (A B, then B A, so neither side always goes first),
a fresh child process with that tree's ``src`` first on ``sys.path`` and this checkout's
``benchmarks/runner_overhead.py`` workload (the same measuring code for both sides): the
asyncio floor and the rows chosen with ``--rows``, on ``--items`` items. Per side the
median over rounds of each row's µs/item over the floor of the same child is printed, then
B − A, in wall-clock time and in the process's CPU time (``time.process_time`` read at the
rows' own start and end: on a shared machine the wall clock also counts the time the
process waited for a core, which the CPU time leaves out). Both sides see the same load
because they alternate within seconds of each other.

Run: ``flock /work/wt/bench.lock .venv/bin/python benchmarks/runner_overhead_ab.py
--tree old=/tmp/old-tree --tree new=. --items 20000 --rounds 5``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = """
import asyncio, gc, json, sys, time
sys.path.insert(0, {here!r})
import assay
import runner_overhead as ro

class Clock:  # the rows' own two readings of the clock, as CPU time, the wall kept beside
    def __init__(self):
        self.wall = []
    def perf_counter(self):
        self.wall.append(time.perf_counter())
        return time.process_time()

clock = ro.time = Clock()
rows = ro.make_items({items})
asyncio.run(ro.run_evals_def_target(rows[:200]))  # imports, as a user's earlier code would
out = {{"assay": assay.__file__}}
for name in {rows!r}:
    gc.collect()
    cpu = asyncio.run(ro.ROWS[name](rows))
    out[name] = [clock.wall[-1] - clock.wall[-2], cpu]
print(json.dumps(out))
"""

FLOOR = "floor (asyncio + semaphore + sleep(0))"
SHORT = {
    "stored": "run_stored → SQLite, def target",
    "def": "run_evals, def target",
    "async": "run_evals, async target",
}


KINDS = ("wall", "cpu")


def measure(tree: Path, items: int, rows: list[str]) -> dict[str, dict[str, float]]:
    """One child on ``tree``: per kind (wall clock, process CPU time), seconds per row (the
    floor first)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    code = _CHILD.format(here=str(HERE), items=items, rows=[FLOOR, *rows])
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800
    )
    if out.returncode != 0:
        raise SystemExit(f"{tree}: child failed: {out.stderr.strip().splitlines()[-1:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    expected = str((tree / "src" / "assay" / "__init__.py").resolve())
    if str(Path(result.pop("assay")).resolve()) != expected:
        raise SystemExit(f"{tree}: the child imported another assay")
    return {kind: {name: float(v[i]) for name, v in result.items()} for i, kind in enumerate(KINDS)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH, twice")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", default="stored", help=f"comma-separated of {list(SHORT)}")
    args = parser.parse_args()
    trees = [tuple(spec.split("=", 1)) for spec in args.tree]
    if len(trees) != 2 or any(len(t) != 2 for t in trees):
        raise SystemExit("--tree NAME=PATH exactly twice")
    rows = [SHORT[r] for r in args.rows.split(",")]
    names = [name for name, _ in trees]
    # µs/item: per kind, per tree, the floor and each row over the floor, one per round
    floors = {k: {n: [] for n in names} for k in KINDS}
    over = {k: {n: {r: [] for r in rows} for n in names} for k in KINDS}
    print(f"# {args.items:,} items, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    for round_ in range(args.rounds):
        order = trees if round_ % 2 == 0 else trees[::-1]
        for name, path in order:
            seconds = measure(Path(path).resolve(), args.items, rows)
            shown = []
            for kind in KINDS:
                floors[kind][name].append(seconds[kind][FLOOR] / args.items * 1e6)
                for row in rows:
                    extra = (seconds[kind][row] - seconds[kind][FLOOR]) / args.items * 1e6
                    over[kind][name][row].append(extra)
                values = " ".join(f"{over[kind][name][r][-1]:.1f}" for r in rows)
                shown.append(f"{kind} floor {floors[kind][name][-1]:.1f}, over {values}")
            print(f"round {round_} {name:<6} " + " · ".join(shown))
    print(f"# load {os.getloadavg()[0]:.2f} at the end; medians, µs/item")
    print(f"{'':<14} {'floor':>8} " + " ".join(f"{r[:26] + ' (over)':>34}" for r in rows))
    for kind in KINDS:
        for name in names:
            medians = " ".join(f"{statistics.median(over[kind][name][r]):>34.1f}" for r in rows)
            print(f"{kind:<4} {name:<9} {statistics.median(floors[kind][name]):>8.1f} {medians}")
        a, b = names
        diffs = " ".join(
            f"{statistics.median(over[kind][b][r]) - statistics.median(over[kind][a][r]):>+34.1f}"
            for r in rows
        )
        print(f"{kind:<4} {b + '-' + a:<9} {'':>8} {diffs}")
    print(json.dumps({"floors": floors, "over": over}))


if __name__ == "__main__":
    main()
