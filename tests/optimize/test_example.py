"""The offline example runs as documented and finds the better prompt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_offline_example_improves_on_held_out_data(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples/optimize/offline.py"),
            "--db",
            f"sqlite:///{tmp_path}/a.db",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "validation 0.000 → 1.000" in done.stdout
    assert "a significant improvement" in done.stdout
    assert "Reply with the order number only." in done.stdout
    assert list((tmp_path / ".assay" / "optimizations").iterdir())  # GEPA state kept per id
