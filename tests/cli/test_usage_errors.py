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
