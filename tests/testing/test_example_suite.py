"""End to end: the example suite ``examples/pytest`` in a real pytest process, judged by the
mock OpenAI-compatible server on loopback, twice (record a baseline, then compare with it).

Also the proof that repeats are independent samples: the judge answers at temperature 0, so
single calls come from the model cache on the second session, while the 3 repeats of
``test_refund_answer_is_stable`` reach the server every time.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from assay.store import open_store
from assay.testing.openai_server import MockOpenAIServer

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "pytest"


def _mock_reply():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("example_judge", EXAMPLE / "judge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mock_reply


def _pytest(tmp: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "ASSAY_BASE_URL": base_url,
        "ASSAY_CACHE_PATH": str(tmp / "cache.db"),
    }
    for name in ("ASSAY_DATABASE_URL", "ASSAY_JUDGE_MODEL", "ASSAY_CACHE"):
        env.pop(name, None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLE),
            "-p",
            "assay_pytest",
            "-p",
            "no:cacheprovider",
            "--assay-db",
            str(tmp / "runs.db"),
            *args,
        ],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_example_suite_end_to_end(tmp_path: Path) -> None:
    with MockOpenAIServer(responder=_mock_reply()) as server:
        first = _pytest(
            tmp_path,
            server.base_url,
            "--assay-update-baseline",
            f"--junitxml={tmp_path / 'junit.xml'}",
            f"--assay-summary={tmp_path / 'summary.md'}",
        )
        assert first.returncode == 0, first.stdout + first.stderr
        assert "7 passed" in first.stdout
        # 5 cases + 3 fresh repeats; the dataset test's 5 calls are the cases' (cached)
        assert len(server.requests) == 8
        second = _pytest(tmp_path, server.base_url, "--assay-baseline", "default")
        assert second.returncode == 0, second.stdout + second.stderr
        assert len(server.requests) == 8 + 3  # only the repeats bypass the cache
    assert second.stdout.count("no significant regression vs baseline") == 3
    props = {
        tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")}
        for tc in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    }
    refund = props["test_answer_is_correct[refund-window]"]
    assert refund["assay.correctness.score"] == "1"
    assert refund["assay.correctness.min"] == "1"
    assert refund["assay.correctness.reason"] == "says what the reference says"
    assert props["test_refund_answer_is_stable"]["assay.correctness.cache"] == "bypassed"
    assert props["test_support_quality"]["assay.correctness.fail_under"] == "0.8"
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "**3 run(s)**, 0 significant regression(s)" in summary
    assert "| examples/pytest/test_support_bot.py::test_support_quality (`" in summary
    with open_store(str(tmp_path / "runs.db")) as db:
        baselines = {r.info.name for r in db.runs.list(tag="baseline=default")}
        assert baselines == {
            "examples/pytest/test_support_bot.py::test_answer_is_correct",
            "examples/pytest/test_support_bot.py::test_refund_answer_is_stable",
            "examples/pytest/test_support_bot.py::test_support_quality",
        }
        assert len(db.runs.list()) == 6
