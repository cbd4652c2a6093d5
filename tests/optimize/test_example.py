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


def test_offline_judge_example_raises_kappa_on_val_and_gates_on_test(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples/optimize_judge/offline.py"),
            "--db",
            f"sqlite:///{tmp_path}/a.db",
            "--min",
            "kappa=0.3",
            "--write-best",
            str(tmp_path / "best.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    summary = next(line for line in done.stdout.splitlines() if line.startswith("kappa on val"))
    seed_val, best_val = map(float, summary.split("(")[0].split()[-3::2])
    assert best_val > seed_val, summary
    # the honest outcome on 15 held-out items: below the gate, so no certificate, exit 1
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gates not met, no certificate" in summary
    assert "type: multi-turn-judge" in (tmp_path / "best.yaml").read_text(encoding="utf-8")
