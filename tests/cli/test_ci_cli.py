"""``assay ci summary``: the Markdown comment of a stored run, through the real command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .test_gates_cli import _stored_run

SRC = Path(__file__).resolve().parents[2] / "src"


def assay(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line of this tree (``src`` first on the path)."""
    env = {
        "COLUMNS": "200",
        "PATH": "/usr/bin:/bin",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": str(SRC),
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", "--db", f"sqlite:///{db}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_summary_against_a_baseline_lists_the_regression(tmp_path: Path) -> None:
    db = tmp_path / "ci.db"
    good, bad = _stored_run(db, right=True), _stored_run(db, right=False)
    done = assay(db, "ci", "summary", bad, "--baseline", good, "--markdown")
    assert done.returncode == 0, done.stderr
    row = "| exact-match | 0 [0, 0] | 1 | -1 [-1, -1] | regressed (n=30) |"
    assert f"| 🔴 | `{bad[:8]}` {row}" in done.stdout
    assert "regressed (n=30)" in done.stdout and "1 significant regression(s)" in done.stdout
    out = tmp_path / "comment.md"
    written = assay(
        db,
        "ci",
        "summary",
        bad[:8],
        "--baseline",
        good,
        "-o",
        str(out),
        "--server-url",
        "https://assay.example",
    )
    assert written.returncode == 0, written.stderr
    assert f"(https://assay.example/runs/{bad})" in out.read_text(encoding="utf-8")


def test_an_unknown_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "ci.db"
    _stored_run(db, right=True)
    done = assay(db, "ci", "summary", "nosuchrun")
    assert done.returncode == 2
    assert "nosuchrun" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_runs_list_filters_by_tag(tmp_path: Path) -> None:
    import json

    from assay.store import open_store

    db = tmp_path / "ci.db"
    first, second = _stored_run(db, right=True), _stored_run(db, right=False)
    with open_store(f"sqlite:///{db}") as store:
        store.runs.add_tags(second, ["git.branch=main"])
    done = assay(db, "runs", "list", "--tag", "git.branch=main", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [r["info"]["id"] for r in listed] == [second]
    assert listed[0]["info"]["tags"] == ["git.branch=main"]
    assert first not in done.stdout
    shown = assay(db, "runs", "show", second, "--items", "0")
    assert shown.returncode == 0, shown.stderr
    assert "tags: git.branch=main" in shown.stdout
