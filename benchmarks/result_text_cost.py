"""What the searchable text of each result costs the writer (issue 25).

PostgreSQL keeps a lower-cased copy of each result's input, output and expected output
(migration 0010) with its item id (0012), written by a trigger in the results'
transaction; SQLite keeps nothing since its FTS5 trigram index was dropped (2.4x slower
writes). This writes the same seeded results (``benchmarks/web.py``'s builder) into one
store with the schema at ``--against`` (default 0011: before the item id) and at head,
alternating twice, and prints the best time of each per 1,000 results and their ratio.
(0009, before any copy, cannot take today's results: 0011's downgrade removes a column
they carry.)

Run: ``.venv/bin/python benchmarks/result_text_cost.py [--items 20000] [--against 0011]
[--store postgresql+psycopg://user:pw@host/db]`` (PostgreSQL: a new schema, dropped after).
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path

from alembic import command

from assay.store import open_store
from assay.store.engine import _alembic_config

_spec = importlib.util.spec_from_file_location("bench_web", Path(__file__).with_name("web.py"))
assert _spec is not None and _spec.loader is not None
web = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(web)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--store", default=None, help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--against", default="0011", help="the revision compared with head")
    args = parser.parse_args()
    best: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory(prefix="assay-text-cost-") as tmp,
        web._store_url(args.store, Path(tmp)) as url,
        open_store(url) as store,
    ):
        print(f"store: {url.split('@')[-1]}")
        for round_ in range(2):
            for revision in (args.against, "head"):
                with store.engine.connect() as conn, conn.begin():
                    if revision == args.against:
                        command.downgrade(_alembic_config(conn), args.against)
                    else:
                        command.upgrade(_alembic_config(conn), "head")
                started = time.perf_counter()
                web.build_run(store, f"run-{revision}-{round_}", args.items, seed=round_)
                took = (time.perf_counter() - started) * 1000 / args.items * 1000
                best[revision] = min(best.get(revision, took), took)
                print(f"round {round_} at {revision}: {took:.0f} ms per 1,000 results")
    print(
        f"best: {args.against} {best[args.against]:.0f} ms, head {best['head']:.0f} ms per "
        f"1,000 results: x{best['head'] / best[args.against]:.2f}"
    )


if __name__ == "__main__":
    main()
