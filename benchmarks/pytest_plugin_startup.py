"""What the pytest plugin costs a suite that does not use it (issue 22), hyperfine-style.

pytest loads every installed ``pytest11`` plugin into every suite, so the plugin's price
is paid by suites that never call assay. Workload: a fresh ``python -m pytest -q`` process
on a suite of one trivial test, ``-p no:cacheprovider``, with the other installed plugins
off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: the shared venv autoloads schemathesis,
hypothesis and anyio, seconds of noise on a loaded machine), with and without
``-p assay_pytest`` (how the entry point loads it), the two alternating run by run so load
changes on the shared machine hit both alike; ``--warmup`` runs of each are discarded.
A third row is the price once a test *does* use assay (one ``assert_score`` with the
``exact-match`` scorer and a stored run): the imports of the runner, the store and numpy,
paid only then.

Last, the module's own import time in one interpreter (``python -X importtime -c "import
assay_pytest"`` with pytest imported first, so only the plugin's lines are counted).

Each row: mean ± standard deviation, min and median of the wall time over ``--runs`` runs.
The figure of interest is the difference of the first two rows (the plugin's cost).

Run: ``.venv/bin/python benchmarks/pytest_plugin_startup.py [--runs 20] [--warmup 3]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

PLAIN = "def test_plain():\n    assert 1 + 1 == 2\n"
USING = (
    "from assay.testing import assert_score\n\n"
    "def test_uses_assay():\n"
    "    assert_score('exact-match', output='a', expected_output='a', min=1)\n"
)


def _once(folder: Path, plugin: bool) -> float:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if plugin:
        args += ["-p", "assay_pytest"]
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    env.pop("ASSAY_DATABASE_URL", None)
    started = time.perf_counter()
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest failed in {folder}:\n{done.stdout}\n{done.stderr}")
    return elapsed


def _row(name: str, times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    return (
        f"| {name} | {statistics.mean(ms):.0f} ± {statistics.stdev(ms):.0f} | "
        f"{min(ms):.0f} | {statistics.median(ms):.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, using = Path(tmp, "plain"), Path(tmp, "using")
        plain.mkdir()
        using.mkdir()
        (plain / "test_plain.py").write_text(PLAIN, encoding="utf-8")
        (using / "test_using.py").write_text(USING, encoding="utf-8")
        for _ in range(opts.warmup):
            _once(plain, False)
            _once(plain, True)
            _once(using, True)
        without, with_plugin, used = [], [], []
        for _ in range(opts.runs):
            without.append(_once(plain, False))
            with_plugin.append(_once(plain, True))
            used.append(_once(using, True))
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load {load}, "
        f"{opts.runs} runs + {opts.warmup} warm-up"
    )
    print("| suite | wall ms (mean ± sd) | min | median |")
    print("|---|---|---|---|")
    print(_row("one plain test, without the plugin", without))
    print(_row("one plain test, with `-p assay_pytest`", with_plugin))
    print(_row("one `assert_score` test (assay used; run stored)", used))
    delta = statistics.median(with_plugin) - statistics.median(without)
    print(f"\nplugin cost (difference of medians): {delta * 1000:+.1f} ms")
    print(f"import of assay_pytest alone (after pytest): {_import_us()} µs")


def _import_us() -> int:
    """The plugin module's cumulative import time from ``-X importtime`` (µs), the median
    of 5 after one run that writes its bytecode (as an installed package has it)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    found = []
    for _ in range(6):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import pytest; import assay_pytest"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(x for x in done.stderr.splitlines() if x.rstrip().endswith("| assay_pytest"))
        found.append(int(line.split("|")[1]))
    return int(statistics.median(found[1:]))


if __name__ == "__main__":
    main()
