"""Import throughput and peak memory of a large JSONL file into a SQLite (and PostgreSQL) store.

Generates ``--rows`` (default 1,000,000) JSONL rows in a temporary directory, then:

1. parses and validates them with ``read_items`` alone (the reader's ceiling);
2. imports them with ``import_file`` into a fresh temporary SQLite store (timed, untraced);
3. with ``--postgres URL`` (default: ``$ASSAY_DATABASE_URL`` when it is a PostgreSQL URL),
   imports them into a fresh schema of that database (timed, untraced; the schema is dropped
   afterwards) and prints the PostgreSQL/SQLite time ratio of this same run;
4. imports them again into another fresh SQLite store under ``tracemalloc`` (slower; only for
   the Python-heap peak, which must stay flat: the import streams, it never holds the file).

Prints rows/s for 1-3, the tracemalloc peak of 4 and the process's ``ru_maxrss`` (peak
resident set, which includes the interpreter, pyarrow/SQLAlchemy imports and SQLite's page
cache) before and after the imports.

Usage::

    .venv/bin/python benchmarks/dataset_import.py [--rows 1000000] [--no-trace]
        [--postgres postgresql://user:password@host/db]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import secrets
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine

from assay.datasets import import_file, read_items
from assay.store import open_store, resolve_url


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


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A URL of ``url``'s database whose ``search_path`` is a new, empty schema (dropped
    afterwards), so the benchmark never touches the database's own tables."""
    base = resolve_url(url)
    schema = f"assay_bench_{secrets.token_hex(6)}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        scoped = base.update_query_dict({"options": f"-csearch_path={schema}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


def timed_import(path: Path, db: Path | str) -> tuple[int, float]:
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
    env_url = os.environ.get("ASSAY_DATABASE_URL", "")
    parser.add_argument(
        "--postgres",
        metavar="URL",
        default=env_url if env_url.startswith("postgres") else None,
        help="also import into a temporary schema of this PostgreSQL database "
        "(default: $ASSAY_DATABASE_URL when it is a PostgreSQL URL)",
    )
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
        if args.postgres:
            with postgres_schema(args.postgres) as url:
                pg_count, pg_s = timed_import(data, url)
            print(
                f"import to PostgreSQL: {pg_count / pg_s:>10,.0f} rows/s ({pg_s:.1f} s;"
                f" {pg_s / import_s:.2f}x the SQLite time)"
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
