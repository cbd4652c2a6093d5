"""``assay optimize-judge`` as a real subprocess against a mock OpenAI-compatible server on
loopback playing the judge and the reflection model: exit codes, the JSON, the certificate,
and the written scorer config that ``assay run -s`` accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.models.base import ChatMessage
from assay.testing.openai_server import MockOpenAIServer
from tests.optimize.judge_mock import (
    CRITICISM_RULE,
    judge_reply,
    labelled_rows,
    reflection_reply,
    useless_reflection,
    write_rows,
)

ROOT = Path(__file__).resolve().parents[2]


def _messages(body: dict[str, Any]) -> list[ChatMessage]:
    return [ChatMessage(role=m["role"], content=str(m["content"])) for m in body["messages"]]


def responder(body: dict[str, Any]) -> str:
    if body["model"] == "reflect":
        return reflection_reply(_messages(body), None)
    if body["model"] == "reflect-useless":
        return useless_reflection(_messages(body), None)
    return judge_reply(_messages(body), None)


@pytest.fixture
def mock() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(responder=responder) as server:
        yield server


def _config(tmp_path: Path, base_url: str, reflect: str = "reflect") -> Path:
    write_rows(tmp_path / "labelled.jsonl", labelled_rows())
    config = {
        "scorer": {
            "type": "toxicity",
            "params": {
                "model": "openai-compatible/judge",
                "base_url": base_url,
                "reason": "template",
            },
        },
        "data": "labelled.jsonl",
        "label": "label",
        "label_map": {"toxic": 1, "ok": 0},
        "kind": "binary",
        "split": {"seed": 3},
        "budget": {"max_metric_calls": 300},
        "minibatch_size": 10,
        "reflection_model": f"openai-compatible/{reflect}",
        "reflection_base_url": base_url,
        "resamples": 200,
        "run_dir": "gepa",
    }
    path = tmp_path / "optimize_judge.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def assay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "200",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": str(ROOT / "src"),
        "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'assay.db'}",
        "HOME": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**env, **{k: v for k, v in os.environ.items() if k == "SYSTEMROOT"}},
    )


def test_a_passing_gate_certifies_the_winner_and_assay_run_accepts_it(
    tmp_path: Path, mock: MockOpenAIServer
) -> None:
    config = _config(tmp_path, mock.base_url)
    done = assay(
        tmp_path,
        "optimize-judge",
        str(config),
        "--min",
        "kappa=0.6",
        "--json",
        "out.json",
        "--write-best",
        "best.yaml",
        "-q",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert result["certificate_id"] and result["passed"]
    test = result["held_out"]
    assert test["seed"]["statistics"]["kappa"]["value"] < 0.5
    assert test["best"]["statistics"]["kappa"]["ci_low"] >= 0.6
    assert result["difference"]["kappa"]["ci_low"] > 0
    assert "statistics (95% CI): seed → winner" in done.stdout
    assert "confusion on test" in done.stdout
    best = yaml.safe_load((tmp_path / "best.yaml").read_text(encoding="utf-8"))
    assert CRITICISM_RULE in json.dumps(best["params"])
    # the written judge is the certified one: a run that requires a certificate accepts it
    run = assay(
        tmp_path, "run", "--data", "labelled.jsonl", "-s", "best.yaml", "--require-calibrated"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # and the seed judge, never certified, is refused
    seed = assay(
        tmp_path,
        "run",
        "--data",
        "labelled.jsonl",
        "-s",
        json.dumps(result["scorer"]),
        "--require-calibrated",
    )
    assert seed.returncode == 2


def test_a_gate_that_is_not_met_exits_1_without_a_certificate(
    tmp_path: Path, mock: MockOpenAIServer
) -> None:
    config = _config(tmp_path, mock.base_url, reflect="reflect-useless")
    done = assay(
        tmp_path,
        "optimize-judge",
        str(config),
        "--min",
        "kappa=0.6",
        "--json",
        "-",
        "-q",
        "--write-best",
        "best.yaml",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["certificate_id"] is None and not result["passed"]
    assert result["gates"][0]["passed"] is False


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, mock: MockOpenAIServer) -> None:
    config = _config(tmp_path, mock.base_url)
    done = assay(tmp_path, "optimize-judge", str(config), "--min", "kapa=0.6")
    assert done.returncode == 2
    assert "no statistic 'kapa'" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    bad = assay(tmp_path, "optimize-judge", str(config), "--min", "kappa")
    assert bad.returncode == 2 and "expected METRIC=NUMBER" in bad.stderr


def test_a_killed_judge_optimization_resumes_with_assay_optimize_resume(
    tmp_path: Path, mock: MockOpenAIServer
) -> None:
    import signal
    import time

    from assay.store import open_store

    mock.latency_s = 0.05
    config = _config(tmp_path, mock.base_url)
    env_args = ("optimize-judge", str(config), "--min", "kappa=0.6", "-q")
    first = subprocess.Popen(
        [sys.executable, "-m", "assay", *env_args],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT / "src"),
            "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'assay.db'}",
            "HOME": str(tmp_path),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    with open_store(f"sqlite:///{tmp_path / 'assay.db'}") as store:
        while time.monotonic() < deadline:
            found = store.optimizations.list() if (tmp_path / "assay.db").exists() else []
            if found and len(store.optimizations.evaluations(found[0].id)) >= 2:
                break
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        [record] = store.optimizations.list()
        assert record.status == "running"  # killed: nobody marked it
    resumed = assay(tmp_path, "optimize", "resume", record.id, "--json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["optimization_id"] == record.id and result["certificate_id"]
