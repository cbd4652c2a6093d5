"""How long migration 0014 (JSON columns that keep their text) takes on first open of a
large store: a store built at revision 0013 with one run of ``--items`` results (one scorer,
as ``benchmarks/web.py`` builds them; every 10th output a bare number, which SQLite's old
``JSON`` affinity stored as a number) and a dataset of as many items, then ``open_store``
timed (wall and CPU of this process; on PostgreSQL the server's rewrite is in the wall time).

    env PYTHONPATH=src python benchmarks/json_migration.py --items 100000 [--store URL]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from alembic import command

sys.path.insert(0, str(Path(__file__).parent))

from web import _store_url, build_run

from assay.store import Store, open_store
from assay.store.engine import _alembic_config, create_store_engine, resolve_url
from assay.types import Item


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--store", default=None, help="a PostgreSQL URL; default SQLite")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="assay-json-migration-") as tmp,
        _store_url(args.store, Path(tmp)) as url,
    ):
        engine = create_store_engine(resolve_url(url))
        with engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), "0013")
        old = Store(engine)
        started = time.perf_counter()
        build_run(old, "cand", args.items, seed=2)
        with engine.begin() as conn:  # bare numbers, as a target returning numbers stores
            conn.execute(
                sa.text(
                    "UPDATE item_results SET output = '0.1234567890123456'"
                    " WHERE mod(position, 10) = 0"
                )
            )
        old.datasets.create("d")
        old.datasets.add_items(
            "d", (Item(id=f"i{n}", input=n / 7, expected_output=n) for n in range(args.items))
        )
        engine.dispose()
        print(
            f"store: {url.split('@')[-1]}; built at 0013 in {time.perf_counter() - started:.1f} s"
        )
        if args.store is None:
            size = Path(url.removeprefix("sqlite:///")).stat().st_size
            print(f"file: {size / 2**20:.0f} MiB")
        wall, cpu = time.perf_counter(), time.process_time()
        with open_store(url) as store:
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            rows = sum(1 for _ in store.runs.results("cand", limit=10))
        print(
            f"migration 0013 -> head on first open: {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"({args.items:,} results + {args.items:,} items; {rows} read back)"
        )


if __name__ == "__main__":
    main()
