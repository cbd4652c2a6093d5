"""SQLite text search at 100,000 results: the options of issue 25, measured side by side.

Writes one seeded run (``benchmarks/web.py``'s builder) into a fresh SQLite file, timing
the write, then counts the results holding a common word (``gamma``, half the run) and a
missing one three ways:

- the reference scan, ``lower(CAST(column AS TEXT)) LIKE`` on input, output and expected
  output (what SQLite ran before);
- plain ``LIKE`` on the stored text (``run_queries._text_condition``'s SQLite path now:
  SQLite's ``LIKE`` folds ASCII case as ``lower()`` does);
- an FTS5 trigram index built once when the run finishes (one ``INSERT ... SELECT`` of the
  finished run, no per-row triggers), timed against the run's own write time, with what it
  adds to the file.

Run: ``.venv/bin/python benchmarks/sqlite_search_options.py [--items 100000]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from assay.store import open_store

_spec = importlib.util.spec_from_file_location("bench_web", Path(__file__).with_name("web.py"))
assert _spec is not None and _spec.loader is not None
web = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(web)

_COLUMNS = ("input", "output", "expected_output")


def _timed(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(5):
        start = time.perf_counter()
        found = conn.execute(sql, args).fetchone()[0]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-search-options-") as tmp:
        path = Path(tmp) / "search.db"
        with open_store(f"sqlite:///{path}") as store:
            started = time.perf_counter()
            web.build_run(store, "run", args.items, seed=1)
            written = time.perf_counter() - started
        conn = sqlite3.connect(path)
        conn.execute("VACUUM")  # both sizes without free pages
        size = os.path.getsize(path)
        print(f"wrote {args.items:,} results in {written:.1f} s; file {size / 1e6:.1f} MB")
        started = time.perf_counter()
        conn.execute(
            "CREATE VIRTUAL TABLE found USING fts5(input, output, expected_output, "
            "content='', tokenize='trigram')"
        )
        values = ", ".join(f"lower(CAST({c} AS TEXT))" for c in _COLUMNS)
        conn.execute(
            f"INSERT INTO found (rowid, {', '.join(_COLUMNS)}) "
            f"SELECT rowid, {values} FROM item_results WHERE run_id = 'run'"
        )
        conn.commit()
        built = time.perf_counter() - started
        conn.execute("VACUUM")
        grown = os.path.getsize(path) - size
        print(
            f"FTS5 trigram index built at finish: {built:.1f} s "
            f"({built / written:.0%} of the run's write time), file +{grown / 1e6:.1f} MB"
        )
        for needle in ("gamma", "no such words"):
            pattern = f"%{needle}%"
            scans = {
                "lower(CAST) LIKE": " OR ".join(
                    f"lower(CAST({c} AS TEXT)) LIKE ? ESCAPE '\\'" for c in _COLUMNS
                ),
                "plain LIKE": " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in _COLUMNS),
            }
            for label, condition in scans.items():
                ms, found = _timed(
                    conn,
                    f"SELECT count(*) FROM item_results WHERE run_id = 'run' AND ({condition})",
                    (pattern,) * 3,
                )
                print(f"count {needle!r:16} {label:18} {ms:7.1f} ms  ({found:,} found)")
            ms, found = _timed(
                conn, "SELECT count(*) FROM found WHERE found MATCH ?", (f'"{needle}"',)
            )
            print(f"count {needle!r:16} {'FTS5 trigram':18} {ms:7.1f} ms  ({found:,} found)")


if __name__ == "__main__":
    main()
