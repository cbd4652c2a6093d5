"""``assay live status NAME`` as a person reads it: counts, rates, budget and the latest
rows of a monitor that already exited (read from the store), and a one-line refusal for a
monitor that never ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from assay.live import monitor

ROOT = Path(__file__).resolve().parents[2]


def assay(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "COLUMNS": "200",
        "PATH": "/usr/bin:/bin",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": str(ROOT / "src"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "ASSAY_DATABASE_URL": db,
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_status_shows_counts_budget_and_latest_rows(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'live.db'}"
    wrapped = monitor(
        lambda text: text,
        scorers=["exact-match"],
        rate=1.0,
        filter=lambda inp, out: inp != "ignore me",
        budget_usd=2.0,
        budget_window="hour",
        store=db,
        name="helpdesk",
        observation_id=lambda text: f"req-{text}",
    )
    for text in ["a", "b", "ignore me", "c", "a"]:  # "a" twice: a retried request
        wrapped(text)
    wrapped.monitor.close()
    shown = assay(db, "live", "status", "helpdesk", "--recent", "2")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "monitor: helpdesk" in out and "status: completed" in out
    assert "observed 5  eligible 4  sampled 4  scored 3  duplicate 1" in out
    assert "filtered out 1" in out and "observed sample rate: 1.000" in out
    assert "budget: $0.000000 of $2.0 per 3600s window" in out  # a code scorer costs nothing
    assert "stored results: 3" in out
    assert "req-c  exact-match=" in out and "req-a  " not in out  # the latest 2: b, c


def test_unknown_monitor_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    missing = assay(db, "live", "status", "nobody")
    assert missing.returncode == 2  # bad input, as every CliError
    assert "no live run of monitor 'nobody'" in missing.stderr
    assert "Traceback" not in missing.stderr and missing.stdout == ""
