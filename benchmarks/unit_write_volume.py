"""What one scaled-out unit writes to PostgreSQL: WAL bytes and stored bytes per result.

The "100 nodes, on paper" section of docs/scale-out.md sizes the primary's disk by the
write volume of one unit: seeded (a ``work_units`` row with the item), claimed (its lease
written), completed (the unit deleted, its ``item_results`` row, one ``scores`` and one
``item_scores`` row per scorer, ``judge_calls`` rows, every index on them). This measures
it on a real server through the same repository calls a Ray worker makes (seed, claim,
complete), by the server's own WAL position (``pg_current_wal_lsn``) before and after.

    ASSAY_TEST_POSTGRES_URL=postgresql+psycopg://... PYTHONPATH=src \\
        python benchmarks/unit_write_volume.py --units 5000 --input-kb 1 --scorers 2

The WAL position is the server's: other writers at the same time add to it, so that
figure is an upper bound; the result tables' growth (this schema only) is exact.
One process, one claimer: the WAL per unit does not depend on how many claim at once
(apart from full-page images after a checkpoint, which the figure includes as they come).
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
import uuid

from sqlalchemy import create_engine, make_url

from assay.store import Store, open_store
from assay.types import Item, ItemResult, JudgeCall, RunInfo, ScoreResult, TargetSpec, Usage


def _wal(store: Store) -> int:
    with store.engine.connect() as conn:
        lsn = conn.exec_driver_sql("SELECT pg_current_wal_lsn()").scalar_one()
        return int(conn.exec_driver_sql(f"SELECT '{lsn}'::pg_lsn - '0/0'::pg_lsn").scalar_one())


TABLES = ("item_results", "scores", "item_scores", "judge_calls")


def _stored(store: Store) -> int:
    """Bytes of the result tables with their indexes (this schema only: other writers to
    the same server do not count here, while they do in the WAL figure)."""
    with store.engine.connect() as conn:
        return sum(
            int(conn.exec_driver_sql(f"SELECT pg_total_relation_size('{t}')").scalar_one())
            for t in TABLES
        )


def _score(scorer_id: str, with_call: bool) -> ScoreResult:
    calls = (
        [
            JudgeCall(
                step="score",
                status="success",
                prompt="Rate the answer. " * 20,
                model_id="gpt-4o-mini",
                output={"score": 4, "reason": "grounded"},
                usage=Usage(input_tokens=300, output_tokens=20),
            )
        ]
        if with_call
        else []
    )
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id=f"call-{scorer_id}",
        status="ready",
        score=0.75,
        reason="the answer is supported by the context" if with_call else None,
        judge_calls=calls,
    )


def measure(store: Store, units: int, input_kb: int, scorers: int, batch: int) -> None:
    run_id = uuid.uuid4().hex
    names = [f"s{k}" for k in range(scorers)]
    store.runs.create(RunInfo(id=run_id, target=TargetSpec(kind="callable", label="bench")))
    text = "x" * (input_kb * 1024)
    stored_before = _stored(store)
    start = _wal(store)
    store.work_units.seed(
        run_id, ((i, Item(id=f"i{i}", input=f"{i}{text}"), 0) for i in range(units))
    )
    seeded = _wal(store)
    scores = {name: _score(name, with_call=k == 0) for k, name in enumerate(names)}
    t0 = time.perf_counter()
    while got := store.work_units.claim(run_id, "w", batch):
        now = time.time()
        results = [
            ItemResult(
                item_id=item.id,
                repeat=repeat,
                position=position,
                input=item.input,
                output="an answer of a few words",
                scores=scores,
                started_at=now,
                completed_at=now,
            )
            for position, item, repeat in got
        ]
        store.work_units.complete(run_id, "w", results)
    elapsed = time.perf_counter() - t0
    done = _wal(store)
    stored = (_stored(store) - stored_before) / units
    assert store.runs.completed_count(run_id) == units
    per_seed = (seeded - start) / units
    per_done = (done - seeded) / units
    print(
        f"{units} units, input {input_kb} KiB, {scorers} scorers (1 judge call), batch {batch}:"
        f" WAL {per_seed / 1024:.1f} KiB/unit seeding + {per_done / 1024:.1f} KiB/unit"
        f" claim+complete = {(per_seed + per_done) / 1024:.1f} KiB/unit"
        f" (server-wide: an upper bound while others write); result tables"
        f" +{stored / 1024:.1f} KiB/unit;"
        f" {units / elapsed:,.0f} units/s claimed+completed (one claimer)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=5000)
    parser.add_argument("--input-kb", type=int, default=1)
    parser.add_argument("--scorers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    base = os.environ.get("ASSAY_TEST_POSTGRES_URL")
    if not base:
        raise SystemExit("error: set ASSAY_TEST_POSTGRES_URL to a PostgreSQL database")
    schema = f"assay_bench_{secrets.token_hex(4)}"
    admin = create_engine(make_url(base))
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        with open_store(url.render_as_string(hide_password=False)) as store:
            measure(store, args.units, args.input_kb, args.scorers, args.batch)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


if __name__ == "__main__":
    main()
