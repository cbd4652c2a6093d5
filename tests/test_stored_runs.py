"""Stored runs on a real SQLite file: run_dataset, run_stored, resume after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.operations.stored_runs import ResumeError, resume_run, run_dataset, run_stored
from assay.store import open_store
from assay.types import Item

ROOT = Path(__file__).resolve().parents[1]
TARGET = "tests.runner.slow_targets:slow_upper"


def _items(n: int) -> list[Item]:
    return [
        Item(id=f"i{i}", input=f"q{i}", expected_output=f"Q{i}" if i % 3 else "x") for i in range(n)
    ]


def test_run_dataset_pins_the_version_and_stores_every_result(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(url) as store:
        store.datasets.create("qa")
        v1 = store.datasets.add_items("qa", _items(6))
        store.datasets.add_items("qa", [Item(id="extra", input="e", expected_output="E")])
        run = run_dataset("qa", TARGET, ["exact-match"], version=v1, store=store, progress=False)
        record = store.runs.get(run.id)
        assert record.status == "completed"
        assert record.info.dataset_version == v1 and record.info.total_items == 6
        results = list(store.runs.results(run.id))
        assert [r.item_id for r in results] == [f"i{i}" for i in range(6)]
        assert run.summary.scorers["exact-match"].mean == pytest.approx(4 / 6)
        assert record.summary is not None and record.summary.results == 6


def test_run_stored_keeps_inline_items_and_resume_of_completed_run_is_refused(
    tmp_path: Path,
) -> None:
    with open_store(f"sqlite:///{tmp_path / 'b.db'}") as store:
        run = run_stored([i.model_dump() for i in _items(4)], TARGET, ["exact-match"], store=store)
        assert [i.id for i in store.runs.inline_items(run.id)] == ["i0", "i1", "i2", "i3"]
        with pytest.raises(ResumeError, match="already completed"):
            resume_run(run.id, store=store)


CHILD = """
import sys
from assay.store import open_store
from assay.operations.stored_runs import run_dataset
with open_store(sys.argv[1]) as store:
    print(run_dataset("big", sys.argv[2], ["exact-match"], store=store, concurrency=4,
                      progress=False).id)
"""


def test_sigkilled_run_is_finished_by_resume_with_nothing_lost_or_doubled(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    n = 400
    with open_store(url) as store:
        store.datasets.create("big")
        store.datasets.add_items("big", _items(n))
    log = tmp_path / "calls.log"
    env = {**os.environ, "ASSAY_TEST_CALL_LOG": str(log), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, url, TARGET], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        stored_before = 0
        while time.monotonic() < deadline:
            with open_store(url) as store:
                runs = store.runs.list()
                if runs:
                    stored_before = len(store.runs.completed_keys(runs[0].id))
            if stored_before >= 60:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the run finished before it could be killed"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    with open_store(url) as store:
        (record,) = store.runs.list()
        assert record.status == "interrupted"  # killed: its process no longer holds the run
        done_before = store.runs.completed_keys(record.id)
    assert 60 <= len(done_before) < n
    log.write_text("")  # from here on, log only the resumed session's calls

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "--db",
            url,
            "runs",
            "resume",
            record.id[:10],
            "--no-progress",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    resumed_calls = set(log.read_text().split())
    assert not resumed_calls & {f"q{k[0][1:]}" for k in done_before}, "a stored item ran again"

    with open_store(url) as store:
        record = store.runs.get(record.id)
        assert record.status == "completed"
        keys = store.runs.completed_keys(record.id)
        assert keys == {(f"i{i}", 0) for i in range(n)}
        rows = list(store.runs.score_rows(record.id))
        assert len(rows) == n and len({(r.item_id, r.repeat) for r in rows}) == n
        assert record.summary is not None and record.summary.results == n
        mean = record.summary.scorers["exact-match"].mean
        expected = sum(1 for i in range(n) if i % 3) / n
        assert mean == pytest.approx(expected)


def test_ctrl_c_stops_cleanly_keeps_results_and_resume_finishes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'int.db'}"
    n = 300
    with open_store(url) as store:
        store.datasets.create("big")
        store.datasets.add_items("big", _items(n))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "assay",
        "--db",
        url,
        "run",
        "--dataset",
        "big",
        "--target",
        TARGET,
        "-s",
        "exact-match",
        "-c",
        "2",
        "--no-progress",
    ]
    child = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open_store(url) as store:
            runs = store.runs.list()
            if runs and len(store.runs.completed_keys(runs[0].id)) >= 30:
                break
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "interrupted" in err
    with open_store(url) as store:
        (record,) = store.runs.list()
        assert record.status == "interrupted"
        kept = len(store.runs.completed_keys(record.id))
        assert 30 <= kept < n
        assert record.summary is not None and record.summary.results == kept
        result = resume_run(record.id, store=store, progress=False)
        assert result.status == "completed" and result.summary.results == n
        assert len(store.runs.completed_keys(record.id)) == n


_CALLS = {"n": 0, "stop_after": 0}


async def _upper(input: str) -> str:
    """Upper-cases; raises CancelledError (as Ctrl-C would) once ``stop_after`` calls ran."""
    import asyncio

    _CALLS["n"] += 1
    if _CALLS["stop_after"] and _CALLS["n"] > _CALLS["stop_after"]:
        raise asyncio.CancelledError
    if _CALLS["stop_after"]:
        await asyncio.sleep(0.3)  # the first session takes a while
    return input.upper()


def _interrupted_run(store: object, scorer: object) -> str:
    """A stored run with target ``_upper``, stopped after two of five items."""
    _CALLS.update(n=0, stop_after=2)
    try:
        run = run_stored(
            [i.model_dump() for i in _items(5)],
            _upper,
            [scorer],
            store=store,
            concurrency=1,
            progress=False,
        )
    finally:
        _CALLS.update(n=0, stop_after=0)
    assert run.status == "interrupted"
    return run.id


def _limit_scorer(limit: int) -> object:
    import assay

    return assay.Scorer("short").score(lambda ctx: float(len(ctx.output_text) < limit))


def test_resume_refuses_a_changed_scorer_or_target_naming_what_changed(tmp_path: Path) -> None:
    import assay

    with open_store(f"sqlite:///{tmp_path / 'changed.db'}") as store:
        run_id = _interrupted_run(store, _limit_scorer(200))

        with pytest.raises(ResumeError, match=r"scorer 'short': score step") as refused:
            resume_run(run_id, store=store, target=_upper, scorers=[_limit_scorer(50)])
        assert "--allow-changed" in str(refused.value)

        async def lower(input: str) -> str:
            return input.lower()

        with pytest.raises(ResumeError, match=r"target .*: code"):
            resume_run(run_id, store=store, target=lower, scorers=[_limit_scorer(200)])
        assert len(store.runs.completed_keys(run_id)) == 2  # nothing ran

        judge = assay.create_scorer("exact-match")
        with pytest.raises(ResumeError, match=r"scorers were \['short'\]"):
            resume_run(run_id, store=store, target=_upper, scorers=[judge])

        done = resume_run(
            run_id, store=store, target=_upper, scorers=[_limit_scorer(50)], allow_changed=True
        )
        assert done.status == "completed"
        assert len(store.runs.completed_keys(run_id)) == 5


def test_resume_with_the_same_scorer_and_target_is_accepted(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'same.db'}") as store:
        run_id = _interrupted_run(store, _limit_scorer(200))
        done = resume_run(run_id, store=store, target=_upper, scorers=[_limit_scorer(200)])
        assert done.status == "completed" and done.summary.results == 5
        # the duration covers both sessions: two 0.3 s items before, three quick ones now
        assert done.summary.duration_s is not None and done.summary.duration_s >= 0.55


def test_a_second_resume_of_a_run_in_progress_is_refused_and_scores_nothing(
    tmp_path: Path,
) -> None:
    from assay.store import RunLeasedError

    url = f"sqlite:///{tmp_path / 'twice.db'}"
    n = 300
    with open_store(url) as store:
        store.datasets.create("big")
        store.datasets.add_items("big", _items(n))
    gate = tmp_path / "gate"  # the first run cannot finish before the test opens it
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ASSAY_TEST_GATE": str(gate)}
    target = "tests.runner.slow_targets:gated_upper"
    child = subprocess.Popen([sys.executable, "-c", CHILD, url, target], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        run_id = None
        while time.monotonic() < deadline:
            with open_store(url) as store:
                runs = store.runs.list()
                if runs and len(store.runs.completed_keys(runs[0].id)) >= 8:
                    run_id = runs[0].id
                    break
            time.sleep(0.05)
        assert run_id is not None and child.poll() is None
        with open_store(url) as store:
            assert store.runs.get(run_id).status == "running"
            before = len(store.runs.completed_keys(run_id))
            with pytest.raises(RunLeasedError, match="being executed elsewhere"):
                resume_run(run_id, store=store, progress=False)
        cli = subprocess.run(
            [sys.executable, "-m", "assay", "--db", url, "runs", "resume", run_id[:10]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 2, cli.stderr
        assert "is being executed elsewhere (process" in cli.stderr
        assert "Traceback" not in cli.stderr
        assert child.poll() is None, "the first run must still be going"
        with open_store(url) as store:  # the refused resumes scored nothing of their own
            keys = store.runs.completed_keys(run_id)
            assert len(keys) >= before and len(keys) == len(set(keys))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    gate.touch()
    with open_store(url) as store:
        assert store.runs.get(run_id).status == "interrupted"
        done = resume_run(run_id, store=store, progress=False)
        assert done.status == "completed" and done.summary.results == n
