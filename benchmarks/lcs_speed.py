"""Speed of assay's bit-parallel LCS against RapidFuzz's, in one run (issue 27).

``assay.scorers._lib.lcs.lcs_length`` replaced ``rapidfuzz.distance.LCSseq.similarity`` in the
``textual-difference`` scorer to take RapidFuzz (12.3 MB) out of the core install. This
script measures what that costs: both functions on the same seeded pairs, interleaved
repeats, the median time per pair of each and their ratio. Both answers are compared on every
pair, so a wrong LCS stops the run. Needs RapidFuzz (the ``dev`` extra).

Shapes: STS-B sentence pairs as the scorer sees them (sentence1 vs sentence2, when the file
is present), seeded random pairs of 1,000 and 10,000 characters, and one 50,000-character
pair. On STS-B the scorer's whole preprocess (``text_difference``: UTF-16 conversion, LCS,
word changes) is timed too, once with each LCS plugged in, to show the share the LCS has.

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/lcs_speed.py [--repeats 5] [--data STSB.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from rapidfuzz.distance import LCSseq

from assay.scorers._lib import textdiff
from assay.scorers._lib.lcs import lcs_length

ROOT = Path(__file__).resolve().parents[1]
# the shared data directory beside the checkout (or beside the worktrees' parent)
STSB_CANDIDATES = [base / "shared" / "data" / "stsb" / "stsb_test.jsonl" for base in ROOT.parents]
LETTERS = "abcdefghijklmnopqrstuvwxyz     ,."

Pairs = list[tuple[str, str]]


def _random_pairs(rng: random.Random, length: int, count: int) -> Pairs:
    def text() -> str:
        return "".join(rng.choice(LETTERS) for _ in range(length))

    return [(text(), text()) for _ in range(count)]


def _shapes(stsb: Path | None) -> dict[str, Pairs]:
    rng = random.Random(27)
    shapes: dict[str, Pairs] = {}
    if stsb is not None:
        rows = [json.loads(line) for line in stsb.read_text("utf-8").splitlines() if line]
        shapes["STS-B sentence pairs"] = [(r["sentence1"], r["sentence2"]) for r in rows[:2000]]
    shapes["1,000 chars"] = _random_pairs(rng, 1_000, 200)
    shapes["10,000 chars"] = _random_pairs(rng, 10_000, 10)
    shapes["50,000 chars"] = _random_pairs(rng, 50_000, 1)
    return shapes


def _time(function: Callable[[str, str], int], pairs: Pairs) -> tuple[float, list[int]]:
    started = time.perf_counter()
    answers = [function(first, second) for first, second in pairs]
    return (time.perf_counter() - started) / len(pairs), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data", type=Path, help="STS-B JSONL (sentence1, sentence2)")
    args = parser.parse_args()
    stsb = args.data or next((path for path in STSB_CANDIDATES if path.exists()), None)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, python {platform.python_version()}")  # fmt: skip
    print(f"{'shape':<22} {'pairs':>6} {'assay µs':>12} {'rapidfuzz µs':>13} {'× rapidfuzz':>12}")
    for name, pairs in _shapes(stsb).items():
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.repeats):
            ours_time, ours_answers = _time(lcs_length, pairs)
            theirs_time, theirs_answers = _time(LCSseq.similarity, pairs)
            if ours_answers != theirs_answers:
                raise SystemExit(f"{name}: the two LCS lengths differ")
            ours.append(ours_time)
            theirs.append(theirs_time)
        mine, other = statistics.median(ours) * 1e6, statistics.median(theirs) * 1e6
        print(f"{name:<22} {len(pairs):>6} {mine:>12.1f} {other:>13.1f} {mine / other:>12.1f}")
    if stsb is not None:
        _preprocess_row(_shapes(stsb)["STS-B sentence pairs"], args.repeats)
    print(f"load after {os.getloadavg()[0]:.2f}")


def _preprocess_row(pairs: Pairs, repeats: int) -> None:
    """``text_difference`` per STS-B pair with assay's LCS and with RapidFuzz's, interleaved."""

    def preprocess(first: str, second: str) -> int:
        return textdiff.text_difference(first, second).changes

    ours: list[float] = []
    theirs: list[float] = []
    try:
        for _ in range(repeats):
            textdiff.lcs_length = lcs_length
            ours.append(_time(preprocess, pairs)[0])
            textdiff.lcs_length = LCSseq.similarity
            theirs.append(_time(preprocess, pairs)[0])
    finally:
        textdiff.lcs_length = lcs_length
    mine, other = statistics.median(ours) * 1e6, statistics.median(theirs) * 1e6
    name = "text_difference, STS-B"
    print(f"{name:<22} {len(pairs):>6} {mine:>12.1f} {other:>13.1f} {mine / other:>12.1f}")


if __name__ == "__main__":
    main()
