"""What starting assay costs: ``import assay``, ``assay --help``, and scoring one answer.

Each case runs in a fresh interpreter, ``--repeat`` times plain and ``--repeat`` times under
``-X importtime``; the table shows the median of

- ``cpu s``: the child process's user + system CPU time (``getrusage(RUSAGE_CHILDREN)``) in
  the plain runs, interpreter start-up included (``python -c pass`` is the first row);
- ``import ms``: what ``-X importtime`` reports for the case's top-level imports (cumulative
  wall time inside ``import``, in ms; importtime's own logging inflates it a little, and on a
  loaded machine wall > CPU);
- ``modules``: modules loaded when the case ends, and whether numpy is one of them.

``--src DIR`` measures another tree (``PYTHONPATH=DIR``), e.g. a checkout of an older commit.
``--baseline DIR`` measures that tree too, in the same run with the runs of the two trees
interleaved (so load changes hit both alike), and adds its CPU median and the ratio. Run::

    python benchmarks/import_time.py
    python benchmarks/import_time.py --src /tmp/assay-before/src
    python benchmarks/import_time.py --baseline /tmp/assay-before/src
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES: dict[str, str] = {
    "python -c pass": "pass",
    "import assay": "import assay",
    "assay --help": (
        "import sys\n"
        "sys.argv = ['assay', '--help']\n"
        "from assay.cli.launch import main\n"  # the console script's entry point
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass"
    ),
    "assay runs --help": (  # a subcommand's help builds the Typer app
        "import sys\n"
        "sys.argv = ['assay', 'runs', '--help']\n"
        "from assay.cli.launch import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass"
    ),
    "score one answer": (
        "import assay\nassay.create_scorer('exact-match').run_sync(output='4', ground_truth='4')"
    ),
}
"""Case name -> the code the child runs (its stdout is discarded)."""

REPORT = (
    "\nimport sys as _s\nprint('MODULES', len(_s.modules), 'numpy' in _s.modules, file=_s.stderr)"
)
_IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def run_case(code: str, src: Path, *, importtime: bool) -> tuple[float, float, int, bool]:
    """One fresh interpreter: (cpu s, top-level import ms, modules, numpy loaded)."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
    flags = ["-X", "importtime"] if importtime else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, *flags, "-c", code + REPORT],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    top_level_us = 0
    modules, numpy = 0, False
    for line in proc.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match and not match.group(2).startswith(" "):  # top level: no indentation
            top_level_us += int(match.group(1))
        if line.startswith("MODULES "):
            _, count, has_numpy = line.split()
            modules, numpy = int(count), has_numpy == "True"
    return cpu, top_level_us / 1000, modules, numpy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="tree to measure")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="a second tree, measured alongside")
    args = parser.parse_args()
    src = args.src.resolve()
    print(f"tree: {src}   python {sys.version.split()[0]}   {args.repeat} runs, median")
    if args.baseline is not None:
        compare(src, args.baseline.resolve(), args.repeat)
        return
    print(f"{'case':<20} {'cpu s':>7} {'import ms':>10} {'modules':>8} {'numpy':>6}")
    for name, code in CASES.items():
        plain = [run_case(code, src, importtime=False) for _ in range(args.repeat)]
        timed = [run_case(code, src, importtime=True) for _ in range(args.repeat)]
        cpu = statistics.median(r[0] for r in plain)
        imported = statistics.median(r[1] for r in timed)
        modules, numpy = plain[-1][2], plain[-1][3]
        print(f"{name:<20} {cpu:>7.3f} {imported:>10.1f} {modules:>8} {numpy!s:>6}")


def compare(src: Path, baseline: Path, repeat: int) -> None:
    """CPU medians of both trees per case, their runs interleaved, and the ratio."""
    print(f"baseline: {baseline}")
    print(f"{'case':<20} {'cpu s':>7} {'baseline':>9} {'ratio':>6} {'modules':>8} {'base':>6}")
    for name, code in CASES.items():
        ours: list[tuple[float, float, int, bool]] = []
        theirs: list[tuple[float, float, int, bool]] = []
        for _ in range(repeat):
            ours.append(run_case(code, src, importtime=False))
            theirs.append(run_case(code, baseline, importtime=False))
        cpu = statistics.median(r[0] for r in ours)
        base = statistics.median(r[0] for r in theirs)
        print(
            f"{name:<20} {cpu:>7.3f} {base:>9.3f} {cpu / base:>6.2f} "
            f"{ours[-1][2]:>8} {theirs[-1][2]:>6}"
        )


if __name__ == "__main__":
    main()
