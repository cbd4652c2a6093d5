"""A short run's start-up: what the runner imports before its first call, the HTTP client
imported in a thread from the moment a judge's model string is configured, and the modules
the summary needs imported in a thread while the calls wait (``assay.warm_imports``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.runner.engine import END_OF_RUN_MODULES

SRC = Path(assay.__file__).resolve().parents[1]

# not imported by the run's thread before its first model call: the summary's (numpy,
# statistics), a bar's (Rich: progress=False), a model prompt target's (Jinja2), the
# transport's (aiohttp: in the warm-up thread)
LATE = ("numpy", "rich", "jinja2", "aiohttp", "assay.summary.stats", "assay.summary.source")

# records which thread imports each of LATE (a finder that finds nothing itself)
RECORD_IMPORTS = f"""
import sys, threading
imported = {{}}
class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name in {LATE!r}:
            imported.setdefault(name, threading.current_thread().name)
        return None
sys.meta_path.insert(0, Recorder())
"""


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
        RECORD_IMPORTS + "import json\n"
        "from assay.runner.api import plan_run\n"
        "from assay.runner.options import RunOptions\n"
        "scorer = {'type': 'faithfulness', 'params': {'reason': 'llm', "
        "'model': 'openai-compatible/judge', 'base_url': 'http://127.0.0.1:9/v1'}}\n"
        "plan = plan_run(lambda: [], None, [scorer], RunOptions(), total_items=0)\n"
        "from assay.models import http\n"
        "http._transport_warmer.wait(60)\n"
        "print(json.dumps({'scorers': [s.id for s in plan.scorers], 'imported': imported}))"
    )
    assert out["scorers"] == ["faithfulness"]
    # the judge's model string started the HTTP client's import, off the run's thread
    assert out["imported"] == {"aiohttp": "assay-warm-imports"}


def test_a_local_or_unnamed_model_does_not_import_the_http_client() -> None:
    out = run_child(
        RECORD_IMPORTS + "import json\n"
        "from assay.models.resolve import LazyModel\n"
        "from assay.models import http\n"
        "LazyModel('no-provider-here')\n"
        "print(json.dumps({'warmer': http._transport_warmer is not None, "
        "'imported': imported}))"
    )
    assert out == {"warmer": False, "imported": {}}


def test_a_run_scores_its_items_before_numpy_and_summarises_with_it() -> None:
    """Items are scored with numpy and the statistics not imported (they come in the warm-up
    thread or at the end), and the summary is the same numbers."""
    out = run_child(
        RECORD_IMPORTS + "import json\n"
        "from assay.runner.api import run_evals\n"
        "from assay.scoring.scorer import Scorer\n"
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
        "'imported': imported, 'threads': [t.name for t in threading.enumerate()]}))"
    )
    assert out["first_scored_without_stats"] is True
    assert out["n"] == 40 and out["mean"] == pytest.approx(30 / 40)
    assert out["aggregate"] == out["mean"]
    low, high = out["ci"]
    assert 0.0 < low < 30 / 40 < high < 1.0  # the bootstrap ran (numpy)
    assert out["p50"] is True
    # a fresh process: the summary's modules were imported by the warm-up thread
    assert out["imported"] == dict.fromkeys(END_OF_RUN_MODULES, "assay-warm-imports")
    assert "assay-warm-imports" not in out["threads"]  # and the thread ended with the run


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
