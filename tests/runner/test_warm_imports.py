"""A short run's start-up: what the runner imports before its first call, and the modules
the summary needs imported in a thread while the calls wait (``runner/warm_imports.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.runner.warm_imports import END_OF_RUN_MODULES, ImportWarmer

SRC = Path(assay.__file__).resolve().parents[1]

# not imported before the first model call: the summary's (numpy, statistics), a bar's
# (Rich: progress=False), a model prompt target's (Jinja2), the transport's (aiohttp: on the
# first request)
LATE = ("numpy", "rich", "jinja2", "aiohttp", "assay.summary.stats", "assay.summary.source")


def run_child(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC), "OPENAI_API_KEY": "sk-test"},
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return out


def test_planning_a_judge_run_imports_nothing_its_first_call_does_not_need() -> None:
    out = run_child(
        "import json, sys\n"
        "from assay.runner.api import plan_run\n"
        "from assay.runner.options import RunOptions\n"
        "scorer = {'type': 'faithfulness', 'params': {'reason': 'llm', "
        "'model': 'openai-compatible/judge', 'base_url': 'http://127.0.0.1:9/v1'}}\n"
        "plan = plan_run(lambda: [], None, [scorer], RunOptions(), total_items=0)\n"
        "print(json.dumps({'scorers': [s.id for s in plan.scorers], "
        f"'loaded': sorted(m for m in {LATE!r} if m in sys.modules)}}))"
    )
    assert out["scorers"] == ["faithfulness"]
    assert out["loaded"] == []


def test_a_run_scores_its_items_before_numpy_and_summarises_with_it() -> None:
    """Items are scored with numpy and the statistics not imported (they come in the warm-up
    thread or at the end), and the summary is the same numbers."""
    out = run_child(
        "import json, sys, threading\n"
        "from assay.runner.api import run_evals\n"
        "from assay.scoring.scorer import Scorer\n"
        "import assay.runner.warm_imports as warm\n"
        "started, start = [], warm.ImportWarmer.start\n"
        "def record(self):\n"
        "    start(self)\n"
        "    started.append(self.started)\n"
        "warm.ImportWarmer.start = record\n"
        "seen = []\n"
        "def match(ctx):\n"
        "    seen.append('assay.summary.stats' in sys.modules)\n"
        "    return float(ctx.call.output == ctx.call.ground_truth)\n"
        "rows = [{'id': str(i), 'input': i, 'expected_output': i % 3} for i in range(40)]\n"
        "run = run_evals(rows, lambda input: input % 3 if input % 4 else -1, "
        "[Scorer('scorer').score(match)], concurrency=4, progress=False)\n"
        "s = run.summary.scorers['scorer']\n"
        "print(json.dumps({'first_scored_without_stats': seen[0] is False, 'n': s.count, "
        "'mean': s.mean, 'aggregate': s.aggregates['mean'], 'ci': [s.ci_low, s.ci_high], "
        "'p50': run.summary.latency_ms_p50 is not None, "
        "'started': started, 'threads': [t.name for t in threading.enumerate()]}))"
    )
    assert out["first_scored_without_stats"] is True
    assert out["n"] == 40 and out["mean"] == pytest.approx(30 / 40)
    assert out["aggregate"] == out["mean"]
    low, high = out["ci"]
    assert 0.0 < low < 30 / 40 < high < 1.0  # the bootstrap ran (numpy)
    assert out["p50"] is True
    assert out["started"] == [True]  # a fresh process: the summary's modules were warmed
    assert "assay-warm-imports" not in out["threads"]  # and the thread ended with the run


def test_the_warmer_imports_in_its_own_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "warm_probe_module.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe_module", raising=False)
    warmer = ImportWarmer(("warm_probe_module",))
    assert warmer.modules == ("warm_probe_module",) and not warmer.started
    warmer.start()
    warmer.start()  # once
    warmer.wait(30)
    module = sys.modules["warm_probe_module"]
    assert module.THREAD == "assay-warm-imports"
    assert warmer.started
    assert not any(t.name == "assay-warm-imports" for t in threading.enumerate())


def test_nothing_to_import_starts_no_thread() -> None:
    warmer = ImportWarmer(("json", "sys"))
    assert warmer.modules == ()
    warmer.start()
    assert not warmer.started
    warmer.wait()  # returns at once


def test_an_import_that_fails_in_the_thread_is_left_to_the_caller() -> None:
    warmer = ImportWarmer(("assay_no_such_module_anywhere", "json"))
    warmer.start()
    warmer.wait(30)
    assert "assay_no_such_module_anywhere" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        __import__("assay_no_such_module_anywhere")


def test_the_warmed_modules_are_what_the_summary_imports() -> None:
    """If the accumulator's summary stops needing one of them, the list must follow."""
    source = (SRC / "assay" / "summary" / "accumulator.py").read_text()
    for name in END_OF_RUN_MODULES:
        short = name.rsplit(".", 1)[-1]
        assert (
            f"import {name}" in source
            or f"from {name} import" in source
            or (short == "numpy" and "import numpy as np" in source)
        ), name
