"""Live runs are runs: ``runs show``, ``runs compare`` (and its gate) and the HTML report
read them like any other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.live import monitor
from assay.store import open_store

SRC = Path(__file__).parents[2] / "src"


def assay(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(SRC), "ASSAY_DATABASE_URL": db, "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_two_live_runs_compare_and_gate(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    for name, fn in (("good", lambda q: q), ("bad", lambda q: "zzz qqq")):
        wrapped = monitor(
            fn,
            scorers=["content-similarity"],
            rate=1.0,
            store=db,
            name=name,
            observation_id=lambda q: f"req-{q}",
        )
        for i in range(30):
            wrapped(f"the answer number {i}")
        wrapped.monitor.close()
    with open_store(db) as store:
        good, bad = store.live.run_ids("good")[0], store.live.run_ids("bad")[0]
    shown = assay(db, "runs", "show", good)
    assert shown.returncode == 0 and "n: 30" in shown.stdout and "mean: 1.000" in shown.stdout
    as_json = assay(db, "runs", "show", good, "--json", "--items", "3")
    assert as_json.returncode == 0, as_json.stderr
    metas = [r["meta"] for r in json.loads(as_json.stdout)["results"]]
    assert len(metas) == 3 and all(
        m
        == {"decision": "sampled", "rate": 1.0, "deterministic": False}
        | {"fate": "scored", "reason": None}
        for m in metas
    )
    gate = assay(db, "runs", "compare", good, bad, "--fail-on-regression")
    assert gate.returncode == 1 and "gate failed: content-similarity" in gate.stderr
    report = tmp_path / "live.html"
    exported = assay(db, "runs", "export", good, "-o", str(report))
    assert exported.returncode == 0 and "req-the answer number 7" in report.read_text()
