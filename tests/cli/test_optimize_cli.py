"""``assay optimize`` as users run it: a real subprocess, a real SQLite file, task and
reflection models behind the mock OpenAI-compatible server (one config line each), and a
real kill (SIGKILL) followed by ``assay optimize resume``."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.models.base import ChatMessage
from assay.testing.openai_server import MockOpenAIServer
from tests.optimize.conftest import arithmetic_rows, reflection_reply, task_reply, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _answer(body: dict[str, Any]) -> str:
    messages = [ChatMessage(role=m["role"], content=m["content"]) for m in body["messages"]]
    if body["model"] == "reflect":
        return reflection_reply(messages, None)
    return task_reply(messages, None)


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(responder=_answer) as running:
        yield running


def _config(tmp_path: Path, server: MockOpenAIServer, **changes: Any) -> Path:
    config = {
        "name": "cli-arith",
        "candidate": {"instructions": "You solve arithmetic."},
        "train": write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(6)),
        "val": write_jsonl(tmp_path / "val.jsonl", arithmetic_rows(4, start=10)),
        "test": write_jsonl(tmp_path / "test.jsonl", arithmetic_rows(6, start=20)),
        "scorers": [{"type": "exact-match"}],
        "budget": {"max_metric_calls": 40},
        "task_model": "openai-compatible/task",
        "task_base_url": server.base_url,
        "reflection_model": "openai-compatible/reflect",
        "reflection_base_url": server.base_url,
        **changes,
    }
    path = tmp_path / "optimize.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _command(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "assay", "--db", f"sqlite:///{db}", "optimize", *args]


def _env() -> dict[str, str]:
    return {
        "COLUMNS": "200",
        "PATH": "/usr/bin:/bin",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "HOME": os.environ.get("HOME", "/tmp"),
        "ASSAY_CACHE": "off",
        "OPENAI_API_KEY": "test",
    }


def assay(db: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(db, *args), capture_output=True, text=True, timeout=120, cwd=cwd, env=_env()
    )


def test_optimize_a_config_file_and_show_it(tmp_path: Path, server: MockOpenAIServer) -> None:
    db = tmp_path / "assay.db"
    config = _config(tmp_path, server)
    best = tmp_path / "best.yaml"
    done = assay(db, str(config), "--json", "--write-best", str(best), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["seed_val_score"], result["best_val_score"]) == (0.0, 1.0)
    assert result["test"]["verdict"] == "improved"
    assert yaml.safe_load(best.read_text()) == result["best_candidate"]
    # progress went to stderr: iterations against the budget, the diff of the new text
    assert "metric calls 4/40" in done.stderr
    assert "+Respond with only the final number." in done.stderr
    assert "candidate 1 (from 0, changed instructions): val 1.000 ★ best" in done.stderr
    # both models were called over HTTP
    models = {r.body["model"] for r in server.chat_requests}
    assert models == {"task", "reflect"}

    shown = assay(db, "show", result["optimization_id"][:8], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "completed" in shown.stdout and "2 candidate(s)" in shown.stdout

    text = assay(db, str(config), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "best prompt:" in text.stdout and "Respond with only the final number." in text.stdout


def test_config_errors_exit_2_naming_the_key(tmp_path: Path, server: MockOpenAIServer) -> None:
    db = tmp_path / "assay.db"
    config = _config(tmp_path, server, budget={"max_iteration": 2})
    done = assay(db, str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown key 'budget.max_iteration'" in done.stderr
    assert "did you mean 'max_iterations'" in done.stderr
    missing = assay(db, "show", "feedbeef", cwd=tmp_path)
    assert missing.returncode == 2 and "optimization 'feedbeef' not found" in missing.stderr


def _evaluations(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT count(*) FROM optimization_evaluations").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_sigkill_then_resume_finishes_the_optimization(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    server.latency_s = 0.05
    db = tmp_path / "assay.db"
    config = _config(tmp_path, server, stop_at_perfect=False, budget={"max_metric_calls": 45})
    process = subprocess.Popen(
        _command(db, str(config), "--json"),
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while _evaluations(db) < 4 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the optimization finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)

    with sqlite3.connect(db) as conn:
        [(optimization_id, status)] = conn.execute(
            "SELECT id, status FROM optimizations"
        ).fetchall()
    assert status == "running"  # killed: nothing had the chance to mark it

    resumed = assay(db, "resume", optimization_id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["optimization_id"] == optimization_id
    assert result["status"] == "completed"
    assert 45 <= result["metric_calls"] <= 45 + 10
    assert result["best_val_score"] == 1.0


def _stored_optimizations(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "optimizations" not in tables:
            return 0
        return int(conn.execute("SELECT count(*) FROM optimizations").fetchone()[0])


def test_a_missing_api_key_is_refused_before_the_first_call(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    db = tmp_path / "assay.db"
    config = _config(tmp_path, server, reflection_model="openai/gpt-4o-mini")
    env = {k: v for k, v in _env().items() if k != "OPENAI_API_KEY"}
    best = tmp_path / "best.yaml"
    done = subprocess.run(
        _command(db, str(config), "--write-best", str(best)),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "reflection_model 'openai/gpt-4o-mini': no API key; set OPENAI_API_KEY" in done.stderr
    assert server.chat_requests == [] and not best.exists()
    assert _stored_optimizations(db) == 0


def test_a_cost_only_budget_with_an_unpriced_model_is_refused(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    db = tmp_path / "assay.db"
    config = _config(tmp_path, server, budget={"max_cost_usd": 0.01})
    done = assay(db, str(config), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "task_model 'openai-compatible/task' has no price" in done.stderr
    assert server.chat_requests == []


def test_an_unwritable_write_best_fails_before_the_search(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    db = tmp_path / "assay.db"
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = assay(
        db, str(_config(tmp_path, server)), "--write-best", str(blocker / "best.yaml"), cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "--write-best" in done.stderr
    assert server.chat_requests == [] and _stored_optimizations(db) == 0


def test_a_search_where_every_call_failed_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    from assay.testing.openai_server import MockReply

    def refuse(body: dict[str, Any]) -> MockReply:
        return MockReply(status=401, error="invalid api key")

    db = tmp_path / "assay.db"
    best = tmp_path / "best.yaml"
    with MockOpenAIServer(responder=refuse) as dead:
        config = _config(tmp_path, dead, budget={"max_metric_calls": 12})
        done = assay(db, str(config), "--write-best", str(best), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "optimization failed: all" in done.stderr and "reflection calls failed" in done.stderr
    assert not best.exists()
