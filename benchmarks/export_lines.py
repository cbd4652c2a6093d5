"""CPU of a JSON-lines export in process, both ways in one run (issue 25): the lines written
as text from the rows (``store.result_lines``, what the server streams) against the dicts
serialised one by one (``store.result_export.result_dicts`` + ``to_json``, the path before),
each through the server's client view, on the run ``benchmarks/web.py`` builds.

    env PYTHONPATH=src python benchmarks/export_lines.py --items 100000 [--store URL]

Prints the minimum CPU seconds of ``--repeats`` alternating passes per path and rows per CPU
second (goal: >= 80,000 for the lines, so that an export stays >= 20,000 rows/s over HTTP
on a loaded machine). The bytes of the two are checked equal first.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from pydantic_core import to_json

sys.path.insert(0, str(Path(__file__).parent))

from web import _store_url, build_run

from assay.server.client_view import result_dict_for_client
from assay.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--store", default=None, help="a PostgreSQL URL; default SQLite")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="assay-export-bench-") as tmp,
        _store_url(args.store, Path(tmp)) as url,
        open_store(url) as store,
    ):
        print(f"store: {url.split('@')[-1]}")
        build_run(store, "cand", args.items, seed=2)
        queries = store.run_queries

        def dicts() -> list[bytes]:
            return [to_json(result_dict_for_client(d)) for d in queries.export_dicts("cand")]

        def lines() -> list[bytes]:
            return [
                line.encode()
                for chunk in queries.export_lines("cand", result_dict_for_client)
                for line in chunk
            ]

        if dicts() != lines():
            raise SystemExit("the two paths wrote different bytes")
        cpu: dict[str, list[float]] = {"dicts + to_json": [], "lines as text": []}
        for _ in range(args.repeats):
            for label, export in (("dicts + to_json", dicts), ("lines as text", lines)):
                start = time.process_time()
                export()
                cpu[label].append(time.process_time() - start)
        for label, times in cpu.items():
            best = min(times)
            print(
                f"{label:16s} min {best:.2f} CPU s = {args.items / best:,.0f} rows per CPU s "
                f"(passes: {', '.join(f'{t:.2f}' for t in times)})"
            )
        ratio = min(cpu["dicts + to_json"]) / min(cpu["lines as text"])
        print(f"lines as text: {ratio:.2f}x fewer CPU seconds")


if __name__ == "__main__":
    main()
