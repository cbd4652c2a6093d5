"""``--backend ray`` on ``tasks run``, ``calibrate``, ``optimize`` and ``optimize-judge``
when Ray cannot be used: one line naming the extra, exit 2, nothing stored; and the flags'
own mistakes, refused before anything loads.

Ray's absence is real for the subprocess (``tests.cli.test_missing_extras``: ``ray`` maps to
``None`` in its ``sys.modules``), as in an install without the ``ray`` extra. The models
named below are never called: the Ray check comes first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.store import open_store
from tests.cli.test_missing_extras import EXAMPLES, assay_without, one_line
from tests.optional import required_module

NO_RAY = "the Ray backend needs the 'ray' extra: pip install 'assay[ray]'"


def _stored(cwd: Path) -> tuple[int, int]:
    """Runs and optimizations in the subprocess's store."""
    db = cwd / "assay.db"
    if not db.exists():
        return 0, 0
    with open_store(f"sqlite:///{db}") as store:
        return len(store.runs.list()), len(store.optimizations.list())


def _task(cwd: Path) -> list[str]:
    (cwd / "t.yaml").write_text(
        "task: t\ndataset_path: x\noutput_type: generate_until\n"
        "doc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n",
        encoding="utf-8",
    )
    (cwd / "docs.jsonl").write_text('{"q": "2+2?", "a": "4"}\n', encoding="utf-8")
    (cwd / "preds.jsonl").write_text('{"doc_id": 0, "responses": "4"}\n', encoding="utf-8")
    return ["tasks", "run", "t.yaml", "--docs", "docs.jsonl", "--predictions", "preds.jsonl"]


def _calibration(cwd: Path) -> list[str]:
    shutil.copy(EXAMPLES / "calibration" / "stsb_sample.jsonl", cwd)
    shutil.copy(EXAMPLES / "calibration" / "stsb.yaml", cwd)
    return ["calibrate", "stsb.yaml"]


def _optimization(cwd: Path) -> list[str]:
    for name in ("train.jsonl", "val.jsonl", "test.jsonl"):
        shutil.copy(EXAMPLES / "optimize" / name, cwd)
    text = (EXAMPLES / "optimize" / "optimize.yaml").read_text(encoding="utf-8")
    text = text.replace("openai/gpt-4o-mini", "ollama/task").replace("openai/gpt-4o", "ollama/r")
    (cwd / "optimize.yaml").write_text(text, encoding="utf-8")
    return ["optimize", "optimize.yaml", "--quiet"]


def _judge_optimization(cwd: Path) -> list[str]:
    shutil.copy(EXAMPLES / "optimize_judge" / "halueval_sample.jsonl", cwd)
    text = (EXAMPLES / "optimize_judge" / "optimize_judge.yaml").read_text(encoding="utf-8")
    text = text.replace("openai/gpt-4o-mini", "ollama/r")
    text = text.replace("  params:\n", "  params:\n    model: ollama/judge\n", 1)
    (cwd / "optimize_judge.yaml").write_text(text, encoding="utf-8")
    return ["optimize-judge", "optimize_judge.yaml", "--quiet"]


COMMANDS = {
    "tasks run": _task,
    "calibrate": _calibration,
    "optimize": _optimization,
    "optimize-judge": _judge_optimization,
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_backend_ray_without_ray_is_one_line_exit_2_and_stores_nothing(
    tmp_path: Path, command: str
) -> None:
    args = COMMANDS[command](tmp_path)
    one_line(assay_without("ray", *args, "--backend", "ray", cwd=tmp_path), NO_RAY)
    assert _stored(tmp_path) == (0, 0)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_flags_mistakes_are_one_line_before_anything_runs(tmp_path: Path, command: str) -> None:
    args = COMMANDS[command](tmp_path)
    one_line(
        assay_without("ray", *args, "--backend", "spark", cwd=tmp_path),
        "--backend 'spark': expected 'local' or 'ray'",
    )
    one_line(
        assay_without("ray", *args, "--workers", "2", cwd=tmp_path),
        "--ray-address and --workers need --backend ray",
    )
    assert _stored(tmp_path) == (0, 0)


def test_tasks_run_on_ray_refuses_no_store(tmp_path: Path) -> None:
    """The workers store the results: a run that keeps nothing cannot be scaled out."""
    args = _task(tmp_path)
    one_line(
        assay_without("ray", *args, "--backend", "ray", "--no-store", cwd=tmp_path),
        "--backend ray: its workers store the results, so --no-store cannot be used",
    )


def test_tasks_run_backend_ray_runs_on_a_local_ray_and_records_it(tmp_path: Path) -> None:
    """The flags reach the run: the CLI starts a local Ray of one worker, the run is stored
    with the backend and worker count, and its numbers are the local run's."""
    required_module("ray")
    args = [*_task(tmp_path), "--bootstrap-iters", "10"]
    on_ray = assay_without("", *args, "--backend", "ray", "--workers", "1", cwd=tmp_path)
    assert on_ray.returncode == 0, on_ray.stderr
    local = assay_without("", *args, cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    with open_store(f"sqlite:///{tmp_path / 'assay.db'}") as store:
        runs = {r.info.backend: r for r in store.runs.list()}
        assert (runs["ray"].info.workers, runs["local"].info.workers) == (1, None)
        rows = {
            backend: [
                (r.item_id, r.output, r.scores["exact_match,none"].score)
                for r in store.runs.results(run.info.id)
            ]
            for backend, run in runs.items()
        }
    assert rows["ray"] == rows["local"] == [("0", "4", 1.0)]
