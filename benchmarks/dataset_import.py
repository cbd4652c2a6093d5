"""Import throughput and peak memory of a large JSONL file into a SQLite store.

Generates ``--rows`` (default 1,000,000) JSONL rows in a temporary directory, then:

1. parses and validates them with ``read_items`` alone (the reader's ceiling);
2. imports them with ``import_file`` into a fresh temporary SQLite store (timed, untraced);
3. imports them again into another fresh store under ``tracemalloc`` (slower; only for the
   Python-heap peak, which must stay flat: the import streams, it never holds the file).

Prints rows/s for 1 and 2, the tracemalloc peak of 3 and the process's ``ru_maxrss`` (peak
resident set, which includes the interpreter, pyarrow/SQLAlchemy imports and SQLite's page
cache) before and after the imports.

Usage::

    .venv/bin/python benchmarks/dataset_import.py [--rows 1000000] [--no-trace]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from assay.datasets import import_file, read_items
from assay.store import open_store


def generate(path: Path, rows: int) -> None:
    """Rows shaped like a QA dataset: an id, a question, an answer, context and metadata."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            row = {
                "id": f"item-{i:07d}",
                "input": f"What is the answer to question number {i}?",
                "expected_output": f"The answer is {i * 7 % 1000}.",
                "context": [f"Passage {i} one.", f"Passage {i} two."],
                "metadata": {"topic": ("math", "geo", "sci")[i % 3], "n": i},
            }
            fh.write(json.dumps(row) + "\n")


def maxrss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def timed_import(path: Path, db: Path) -> tuple[int, float]:
    with open_store(str(db)) as store:
        start = time.perf_counter()
        info, count = import_file(store, path, dataset="bench")
        elapsed = time.perf_counter() - start
        assert info.item_count == count == store.datasets.count_items("bench")
    return count, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--no-trace", action="store_true", help="skip the tracemalloc import")
    args = parser.parse_args()

    print(f"python {platform.python_version()} on {platform.machine()}, {args.rows:,} rows")
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        data = tmpdir / "data.jsonl"
        start = time.perf_counter()
        generate(data, args.rows)
        size_mb = data.stat().st_size / 1e6
        print(f"generated {size_mb:,.0f} MB in {time.perf_counter() - start:.1f} s")
        rss_before = maxrss_mb()

        start = time.perf_counter()
        parsed = sum(1 for _ in read_items(data))
        read_s = time.perf_counter() - start
        print(f"read_items only : {parsed / read_s:>10,.0f} rows/s ({read_s:.1f} s)")

        count, import_s = timed_import(data, tmpdir / "timed.db")
        db_mb = (tmpdir / "timed.db").stat().st_size / 1e6
        print(
            f"import to SQLite: {count / import_s:>10,.0f} rows/s ({import_s:.1f} s;"
            f" database {db_mb:,.0f} MB)"
        )

        if not args.no_trace:
            tracemalloc.start()
            traced_count, traced_s = timed_import(data, tmpdir / "traced.db")
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(
                f"traced import   : {traced_count / traced_s:>10,.0f} rows/s"
                f" (tracemalloc peak {peak / 1e6:.1f} MB for a {size_mb:,.0f} MB file)"
            )
        print(
            f"ru_maxrss       : {rss_before:.0f} MB before the imports, {maxrss_mb():.0f} MB after"
        )


if __name__ == "__main__":
    main()
