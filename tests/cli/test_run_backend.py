"""`assay run --backend ray` when Ray cannot be used: one line, exit 2, nothing stored.

Ray's absence is real for the subprocess: a ``ray`` package first on its ``PYTHONPATH``
fails to import, as an environment without the extra does."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

from assay.store import open_store
from tests.optional import required_module

REPO = Path(__file__).resolve().parents[2]


def _assay(tmp_path: Path, *args: str, shadow_ray: bool) -> subprocess.CompletedProcess[str]:
    paths = [str(REPO / "src")]
    if shadow_ray:
        fake = tmp_path / "no_ray" / "ray"
        fake.mkdir(parents=True, exist_ok=True)
        (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
        paths.insert(0, str(fake.parent))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env["ASSAY_DATABASE_URL"] = f"sqlite:///{tmp_path / 'store.db'}"
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "a", "input": "q", "expected_output": "Q"}\n')
    command = [sys.executable, "-m", "assay", "run", "--data", str(data), "-s", "exact-match"]
    return subprocess.run(
        [*command, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def _stored_runs(tmp_path: Path) -> int:
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        return len(store.runs.list())


def test_backend_ray_without_ray_installed_is_one_line_exit_2(tmp_path: Path) -> None:
    done = _assay(tmp_path, "--backend", "ray", shadow_ray=True)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    expected = "error: the Ray backend needs the 'ray' extra: pip install 'assay[ray]'"
    assert lines == [expected], done.stderr  # the form of every missing extra
    assert "Traceback" not in done.stderr
    assert _stored_runs(tmp_path) == 0


def test_an_unknown_backend_and_a_stray_address_are_refused(tmp_path: Path) -> None:
    done = _assay(tmp_path, "--backend", "spark", shadow_ray=True)
    assert done.returncode == 2 and "backend" in done.stderr and "Traceback" not in done.stderr
    done = _assay(tmp_path, "--ray-address", "auto", shadow_ray=True)
    assert done.returncode == 2 and "backend: ray" in done.stderr, done.stderr


def test_an_unreachable_cluster_is_one_line_exit_2(tmp_path: Path) -> None:
    """Nothing listens on port 1 of loopback: refused at once, before Ray's own minutes
    of waiting. Needs Ray installed (without it the missing extra is the one line)."""
    done = _assay(tmp_path, "--backend", "ray", "--ray-address", "127.0.0.1:1", shadow_ray=False)
    assert done.returncode == 2, done.stderr
    expected = (
        "cannot reach the Ray cluster at 127.0.0.1:1"
        if importlib.util.find_spec("ray") is not None
        else "pip install 'assay[ray]'"
    )
    assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert _stored_runs(tmp_path) == 0


def test_a_ray_run_in_which_every_item_errors_exits_1_and_is_stored_so(tmp_path: Path) -> None:
    """`assay run CONFIG --backend ray` (a local Ray of its own, 2 workers) with a target
    that raises on every item: the run is stored completed on Ray with every result an
    item error, and the command exits 1 saying every item failed, as a local run does."""
    required_module("ray")
    rows = "".join(
        f'{{"id": "i{i}", "input": "q{i}", "expected_output": "Q{i}"}}\n' for i in range(12)
    )
    (tmp_path / "data.jsonl").write_text(rows)
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: all-fail-on-ray\n"
        "data: data.jsonl\n"
        "target: tests.targets.fixture_targets:always_fails\n"
        "scorers: [exact-match]\n"
    )
    db = tmp_path / "store.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    env["ASSAY_DATABASE_URL"] = f"sqlite:///{db}"
    env.pop("RAY_ADDRESS", None)
    command = [sys.executable, "-m", "assay", "run", str(config), "--backend", "ray"]
    driver = subprocess.Popen(
        [*command, "--workers", "2", "--no-progress"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: whatever its Ray leaves is reaped below
    )
    try:
        stdout, stderr = driver.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    assert driver.returncode == 1, stderr
    assert "every item failed (12 of 12 results)" in stderr, stderr
    assert "Traceback" not in stderr
    with open_store(f"sqlite:///{db}") as store:
        (record,) = store.runs.list()
        results = list(store.runs.results(record.info.id))
    assert record.info.backend == "ray" and record.info.workers == 2
    assert record.status == "completed"
    assert record.summary is not None and record.summary.item_errors == 12
    assert len(results) == 12
    assert all(r.error is not None and "the service is down" in r.error.message for r in results)
    assert "run " in stdout and "stored" in stdout
