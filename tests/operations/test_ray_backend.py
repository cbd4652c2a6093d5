"""The Ray backend against a real local Ray and a real store (PostgreSQL when
``ASSAY_TEST_POSTGRES_URL`` is set, else an SQLite file): the same results as a local run,
nothing lost or stored twice when a worker or the driver is killed, and the refusals that
come before any unit is claimed.

One local Ray (2 CPUs, no dashboard) serves the whole module: starting it costs ~10 s on
the shared 2-core machine. Without Ray installed the module is skipped, except under CI,
where a missing Ray fails (the dev extra installs it).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.operations.stored_runs import resume_run, run_stored
from assay.runner.result import RunResult
from assay.store import Store, open_store
from assay.testing.openai_server import MockOpenAIServer, MockReply
from tests.operations import ray_targets
from tests.optional import required_module
from tests.store.conftest import postgres_schema_url

ray = required_module("ray")

from assay.operations.ray_backend import RayBackendError, check_store  # noqa: E402  (after the Ray check)

REPO = Path(__file__).resolve().parents[2]
PYTHONPATH = os.pathsep.join([str(REPO / "src"), str(REPO)])
POSTGRES_ENV = "ASSAY_TEST_POSTGRES_URL"
EQUALITY_ITEMS = 2000


__all__ = ["postgres_schema_url"]


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Caches and default stores land in the test's folder, never the developer's."""
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for the module; its workers import ``assay`` and ``tests`` by path."""
    os.environ["PYTHONPATH"] = PYTHONPATH
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def store_url(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """PostgreSQL (a fresh schema) when the test server is named, else an SQLite file."""
    if os.environ.get(POSTGRES_ENV):
        url: str = request.getfixturevalue("postgres_schema_url")
        return url
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


def _items(n: int) -> list[dict[str, object]]:
    """Items whose expected output the target matches for two thirds of them."""
    return [
        {"id": f"i{i}", "input": f"q{i}", "expected_output": f"Q{i}" if i % 3 else "no"}
        for i in range(n)
    ]


def _scores(store: Store, run_id: str) -> list[tuple[object, ...]]:
    return [
        (row.item_id, row.repeat, row.scorer_id, row.status, row.score)
        for row in store.runs.score_rows(run_id)
    ]


def _assert_whole(store: Store, result: RunResult, units: int) -> None:
    """Completed, every unit stored exactly once, no work unit left."""
    run_id = result.record.info.id
    assert store.runs.get(run_id).status == "completed"
    keys = Counter((r.item_id, r.repeat) for r in store.runs.results(run_id))
    assert len(keys) == units and set(keys.values()) == {1}
    assert store.runs.completed_count(run_id) == units
    assert store.work_units.remaining(run_id) == 0


@pytest.mark.usefixtures("local_ray")
def test_ray_and_local_runs_are_equal_item_by_item(store: Store) -> None:
    """The issue's 2,000 items, two code scorers and a judge on a loopback mock (both runs:
    34 s on SQLite at load ~6, 68-82 s at load 10-12; Ray started already)."""
    data = _items(EQUALITY_ITEMS)
    with MockOpenAIServer() as server:
        judge = {
            "type": "toxicity",
            "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
        }
        scorers = ["exact-match", "content-similarity", judge]
        on_ray = run_stored(
            data, ray_targets.upper, scorers, store=store, backend="ray", progress=False
        )
        local = run_stored(data, ray_targets.upper, scorers, store=store, progress=False)
    ray_info = store.runs.get(on_ray.record.info.id).info
    assert (ray_info.backend, ray_info.workers) == ("ray", 2)
    assert store.runs.get(local.record.info.id).info.backend == "local"
    _assert_whole(store, on_ray, len(data))
    assert _scores(store, on_ray.record.info.id) == _scores(store, local.record.info.id)
    values = [
        (r.item_id, r.output, {k: (s.status, s.score, s.values) for k, s in r.scores.items()})
        for r in store.runs.results(on_ray.record.info.id)
    ]
    assert values == [
        (r.item_id, r.output, {k: (s.status, s.score, s.values) for k, s in r.scores.items()})
        for r in store.runs.results(local.record.info.id)
    ]
    summary_ray, summary_local = on_ray.record.summary, local.record.summary
    assert summary_ray is not None and summary_local is not None
    for key, scorer in summary_local.scorers.items():
        assert summary_ray.scorers[key].mean == scorer.mean
        assert summary_ray.scorers[key].count == scorer.count
    counted = ("items", "results", "item_errors", "judge_calls", "usage", "cost_usd")
    assert summary_ray.model_dump(include=set(counted)) == summary_local.model_dump(
        include=set(counted)
    )
    assert summary_ray.items == len(data) and summary_ray.judge_calls >= len(data)
    assert summary_ray.scorers["exact-match"].mean == pytest.approx(2 / 3, abs=0.01)


def _first_worker_pid(store: Store, run_id: str, timeout_s: float = 60.0) -> int:
    """The pid of a worker holding units of the run (its lease owner is host:pid:token)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        holders = store.work_units.holders(run_id) if _run_exists(store, run_id) else {}
        if holders:
            return int(next(iter(holders)).split(":")[1])
        time.sleep(0.05)
    raise AssertionError("no worker claimed a unit")


def _run_exists(store: Store, run_id: str) -> bool:
    return bool(run_id) and store.runs.exists(run_id)


@pytest.mark.usefixtures("local_ray")
def test_a_killed_worker_loses_nothing_and_stores_nothing_twice(store: Store) -> None:
    """SIGKILL a worker process in the middle of a run: its units are claimed again (by the
    other worker or Ray's retry of the task), the run completes, each unit stored once."""
    started: list[str] = []
    outcome: list[RunResult | BaseException] = []

    def drive() -> None:
        try:
            outcome.append(
                run_stored(
                    _items(240),
                    ray_targets.slow_upper,
                    ["exact-match"],
                    store=store,
                    backend="ray",
                    concurrency=2,
                    progress=False,
                    name="kill-a-worker",
                )
            )
        except BaseException as exc:
            outcome.append(exc)

    driver = threading.Thread(target=drive)
    driver.start()
    while not started and driver.is_alive():
        runs = store.runs.list()
        started.extend(r.info.id for r in runs if r.info.name == "kill-a-worker")
        time.sleep(0.05)
    assert started, outcome
    pid = _first_worker_pid(store, started[0])
    done_before = store.runs.completed_count(started[0])
    os.kill(pid, signal.SIGKILL)
    driver.join(timeout=300)
    assert not driver.is_alive()
    result = outcome[0]
    assert isinstance(result, RunResult), result
    assert done_before < 240  # the kill came in the middle
    _assert_whole(store, result, 240)
    assert result.record.summary is not None
    assert result.record.summary.scorers["exact-match"].mean == pytest.approx(160 / 240)


@pytest.mark.usefixtures("local_ray")
def test_a_killed_driver_leaves_a_run_that_resume_completes(store_url: str, tmp_path: Path) -> None:
    """`assay run --backend ray` in a subprocess, SIGKILLed once results arrive; then
    `runs resume` (in this process, on this module's Ray) finishes it, each unit once."""
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            f'{{"id": "i{i}", "input": "q{i}", "expected_output": "Q{i}"}}\n' for i in range(200)
        )
    )
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, "ASSAY_DATABASE_URL": store_url}
    env.pop("CI", None)
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            "--data",
            str(data),
            "--target",
            "tests.operations.ray_targets:slow_upper",
            "--scorer",
            "exact-match",
            "--backend",
            "ray",
            "--concurrency",
            "1",
            "--no-progress",
            "--name",
            "killed-driver",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group: what the killed driver started is reaped
    )
    with open_store(store_url) as store:
        run_id = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            runs = [r for r in store.runs.list() if r.info.name == "killed-driver"]
            if runs and store.runs.completed_count(runs[0].info.id) >= 10:
                run_id = runs[0].info.id
                break
            time.sleep(0.1)
        assert run_id, driver.communicate(timeout=5)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        time.sleep(1.0)  # Ray's agents of the dead driver outlive it: reap its group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
        stopped_at = store.runs.completed_count(run_id)
        assert stopped_at < 200
        assert store.runs.get(run_id).info.backend == "ray"
        result = resume_run(run_id, store=store, progress=False)
        _assert_whole(store, result, 200)
        shown = subprocess.run(
            [sys.executable, "-m", "assay", "runs", "show", run_id[:8], "--items", "0"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shown.returncode == 0 and "backend: ray, 2 workers" in shown.stdout, shown
        assert result.record.summary is not None
        assert result.record.summary.scorers["exact-match"].mean == 1.0


@pytest.mark.usefixtures("local_ray")
def test_a_target_that_cannot_be_shipped_stops_before_any_unit(store: Store) -> None:
    lock = threading.Lock()

    def locked_upper(input: str) -> str:
        with lock:
            return input.upper()

    with pytest.raises(
        RayBackendError, match=r"cannot ship the target '.*locked_upper'.*_thread.lock"
    ):
        run_stored(_items(5), locked_upper, ["exact-match"], store=store, backend="ray")
    assert store.runs.list() == []


@pytest.mark.usefixtures("local_ray")
def test_a_target_missing_on_the_workers_is_named(store: Store, tmp_path: Path) -> None:
    """A module only the driver can import (on its sys.path, not the workers')."""
    folder = tmp_path / "driver_only"
    folder.mkdir()
    (folder / "driver_only_targets.py").write_text("def shout(input):\n    return input.upper()\n")
    sys.path.insert(0, str(folder))
    try:
        import driver_only_targets  # type: ignore[import-not-found]

        with pytest.raises(RayBackendError, match=r"target '.*shout'.*driver_only_targets"):
            run_stored(
                _items(5), driver_only_targets.shout, ["exact-match"], store=store, backend="ray"
            )
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("driver_only_targets", None)
    assert store.runs.list() == []


class _Cluster:
    """What ``check_store`` asks of Ray: the cluster's nodes (one here, one elsewhere)."""

    class util:
        @staticmethod
        def get_node_ip_address() -> str:
            return "127.0.0.1"

    @staticmethod
    def nodes() -> list[dict[str, object]]:
        return [
            {"Alive": True, "NodeManagerAddress": "127.0.0.1"},
            {"Alive": True, "NodeManagerAddress": "203.0.113.9"},
        ]


def test_sqlite_with_a_cluster_on_other_hosts_is_refused(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        with pytest.raises(RayBackendError, match=r"SQLite.*203\.0\.113\.9.*PostgreSQL"):
            check_store(store, _Cluster, "ray://head:10001")  # type: ignore[arg-type]
        check_store(store, _Cluster, None)  # a local Ray: every worker is here
    with open_store("sqlite://") as memory, pytest.raises(RayBackendError, match="in-memory"):
        check_store(memory, _Cluster, None)  # type: ignore[arg-type]


def _judge(server: MockOpenAIServer) -> dict[str, object]:
    return {
        "type": "toxicity",
        "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
    }


@pytest.mark.usefixtures("local_ray")
def test_one_limit_for_the_whole_run_across_two_workers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2 workers x 8 lanes could put 16 judge calls in flight; the run-wide limit is 4 and
    the mock (which counts what is in flight at once) never sees more."""
    monkeypatch.setenv("ASSAY_MAX_IN_FLIGHT", "4")
    with MockOpenAIServer(latency_s=0.05) as server:
        result = run_stored(
            _items(160),
            ray_targets.upper,
            [_judge(server)],
            store=store,
            backend="ray",
            workers=2,
            concurrency=8,
            progress=False,
        )
        peak = server.max_in_flight
        calls = server.statuses[200]
    _assert_whole(store, result, 160)
    assert 2 <= peak <= 4
    assert calls >= 160  # one judge call per item, two for some outputs
    assert {row[3] for row in _scores(store, result.record.info.id)} == {"ready"}


@pytest.mark.usefixtures("local_ray")
def test_throttles_with_retry_after_lose_nothing(store: Store) -> None:
    """A tenth of the judge calls answered 429 with Retry-After: every worker backs off
    through the shared limiter, retries, and every item is scored."""
    with MockOpenAIServer(latency_s=0.02, rate_limit_rate=0.1, retry_after="0.1") as server:
        result = run_stored(
            _items(200),
            ray_targets.upper,
            [_judge(server)],
            store=store,
            backend="ray",
            workers=2,
            concurrency=8,
            progress=False,
        )
        throttled = server.statuses[429]
    _assert_whole(store, result, 200)
    assert throttled >= 5
    assert {row[3] for row in _scores(store, result.record.info.id)} == {"ready"}
    assert result.record.summary is not None
    assert result.record.summary.scorers["toxicity"].count == 200


PAUSE_S = 1.0
PAUSE_SPREAD_S = 0.35
"""How long after the 429 leaves the mock a request of another worker may still arrive:
the worker that got it reports at once, the others hear it at their next report (every
50 ms) and lanes already past their slot check send; loaded 2-core machine."""


@pytest.mark.usefixtures("local_ray")
def test_a_retry_after_pauses_every_worker_together(store: Store) -> None:
    """One judge call mid-run gets 429 with Retry-After: 1. From shortly after it leaves
    the mock until the pause ends, no request of any worker reaches the mock; before it
    both workers were calling (more in flight than one worker's 8 lanes), after it the run
    goes on and every item is scored."""
    lock = threading.Lock()
    answered = 0
    throttled_at: list[float] = []

    def responder(body: dict[str, object]) -> MockReply:
        nonlocal answered
        with lock:
            answered += 1
            if answered == 120 and not throttled_at:
                throttled_at.append(time.time())
                return MockReply(status=429, headers={"Retry-After": "1"}, delay_s=0.0)
        return MockReply()

    with MockOpenAIServer(latency_s=0.05, responder=responder) as server:
        result = run_stored(
            _items(240),
            ray_targets.upper,
            [_judge(server)],
            store=store,
            backend="ray",
            workers=2,
            concurrency=8,
            progress=False,
        )
        arrivals = sorted(r.received_at for r in server.chat_requests)
        peak = server.max_in_flight
        statuses = dict(server.statuses)
    _assert_whole(store, result, 240)
    assert throttled_at and statuses.get(429) == 1, statuses
    assert peak > 8  # both workers had calls in flight at once
    sent = throttled_at[0]
    held = [t - sent for t in arrivals if sent + PAUSE_SPREAD_S < t < sent + PAUSE_S - 0.05]
    assert held == [], f"requests {held} s after the 429, inside its 1 s pause"
    before = [t for t in arrivals if sent - 0.5 < t <= sent]
    assert len(before) >= 10  # the run was in full flow when the 429 came
    assert any(t >= sent + PAUSE_S - 0.05 for t in arrivals)  # and went on after the pause
    assert {row[3] for row in _scores(store, result.record.info.id)} == {"ready"}


@pytest.mark.usefixtures("local_ray")
def test_an_item_that_kills_every_worker_scoring_it_is_stored_as_an_error(store: Store) -> None:
    """The target ends its process on one item (``os._exit``): after 3 worker deaths on it
    the item is stored as an item error naming why, and the run completes."""
    data = _items(40)
    data[7]["input"] = "poison"
    result = run_stored(
        data,
        ray_targets.exit_on_poison,
        ["exact-match"],
        store=store,
        backend="ray",
        concurrency=2,
        progress=False,
    )
    _assert_whole(store, result, 40)
    rows = {r.item_id: r for r in store.runs.results(result.record.info.id)}
    poisoned = rows["i7"].error
    assert poisoned is not None and poisoned.kind == "WorkerDied"
    assert "worker died 3 times on this item" in poisoned.message
    assert all(row.error is None for item_id, row in rows.items() if item_id != "i7")


_MAIN_SCRIPT = """
import sys
from assay.operations.ray_backend import RayBackendError
from assay.operations.stored_runs import run_stored
from assay.store import open_store

def shout(input):
    return input.upper()

targets = {"function": shout, "lambda": lambda input: input.upper()}
with open_store(sys.argv[2]) as store:
    try:
        run_stored([{"id": "a", "input": "x"}], targets[sys.argv[1]], ["exact-match"],
                   store=store, backend="ray", progress=False)
    except RayBackendError as exc:
        print(exc)
        print("runs:", len(store.runs.list()), "ray started:", __import__("ray").is_initialized())
        sys.exit(2)
"""


@pytest.mark.parametrize(
    ("kind", "named"),
    [("function", r"function 'shout' defined in __main__"), ("lambda", r"a lambda defined in")],
)
def test_a_target_defined_in_main_is_refused_before_anything(
    kind: str, named: str, tmp_path: Path
) -> None:
    """A script's own function or lambda (cloudpickle would ship it by value, which breaks on
    other nodes): refused by name before Ray starts or a run is stored."""
    script = tmp_path / "score.py"
    script.write_text(_MAIN_SCRIPT)
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    done = subprocess.run(
        [sys.executable, str(script), kind, f"sqlite:///{tmp_path / 's.db'}"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    first, second = done.stdout.splitlines()
    assert re.search(rf"cannot ship the target .*: it uses {named}.*score\.py, line", first)
    assert "move it to a module" in first
    assert second == "runs: 0 ray started: False"
