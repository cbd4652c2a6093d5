"""Usage errors through the real console script: one line (plus the short usage), exit 2."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "assay"


def _assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [shutil.which("assay") or "assay"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Missing command"),
        (("runs",), "Missing command"),
        (("runs", "show"), "Missing argument 'run_id'"),
        (("runs", "list", "-n", "abc"), "Invalid value for '--limit'"),
        (("nosuchcmd",), "No such command 'nosuchcmd'"),
        (("scorers", "show"), "Missing argument"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    args: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    proc = _assay(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    assert len(lines) <= 2, proc.stderr
    assert lines[-1].startswith("error: ") and message in lines[-1]
    if len(lines) == 2:
        assert lines[0].startswith("Usage: assay")


def test_version_prints_the_version_and_exits_0(tmp_path: Path) -> None:
    from importlib.metadata import version

    proc = _assay("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"assay {version('assay')}"


def _damaged_copy(tmp_path: Path) -> Path:
    """A real assay database with its pages overwritten past the header."""
    good = tmp_path / "good.db"
    from assay.store import open_store

    with open_store(f"sqlite:///{good}"):
        pass
    data = bytearray(good.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    bad = tmp_path / "bad.db"
    bad.write_bytes(bytes(data))
    return bad


@pytest.mark.parametrize(
    "case",
    ["read-only", "not-a-database", "damaged", "unreachable-postgres", "mysql"],
)
def test_database_problems_are_one_line_naming_the_database(case: str, tmp_path: Path) -> None:
    import sqlite3

    if case == "read-only":
        path = tmp_path / "ro.db"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE unrelated (x)")
        url, expected = f"sqlite:///file:{path}?mode=ro&uri=true", "is read-only"
    elif case == "not-a-database":
        path = tmp_path / "notes.db"
        path.write_text("these are my notes, not a database\n" * 100)
        url, expected = f"sqlite:///{path}", "is not an SQLite database"
    elif case == "damaged":
        url, expected = f"sqlite:///{_damaged_copy(tmp_path)}", "is damaged"
    elif case == "unreachable-postgres":
        url, expected = "postgresql://assay:pw@127.0.0.1:1/nothing", "cannot reach the PostgreSQL"
    else:
        url, expected = "mysql://localhost/assay", "unsupported database"
    proc = _assay("--db", url, "runs", "list", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert "pw" not in lines[0]  # the password is never printed
