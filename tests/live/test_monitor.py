"""``assay.monitor``: the caller sees no difference, the counts add up, results are stored
once per observation id, the budget and a dead judge are handled off the request path."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assay.live import monitor, totals
from assay.live.monitoring import Monitor
from assay.live.sampling import id_fraction
from assay.models.openai_compat import OpenAICompatibleModel
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step
from assay.store import open_store
from assay.targets.callable import CallableTarget
from assay.testing.openai_server import MockOpenAIServer
from assay.types import Item
from tests.store.conftest import postgres_schema_url  # noqa: F401 (fixture: a fresh schema)

SRC = Path(__file__).parents[2] / "src"


@pytest.fixture(params=["sqlite", "postgresql"])
def live_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL: a SQLite file, or a fresh PostgreSQL schema (``ASSAY_TEST_POSTGRES_URL``;
    skipped without it unless ``CI`` is set)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'live.db'}"
    url: str = request.getfixturevalue("postgres_schema_url")
    return url


def judge(base_url: str, model: str = "gpt-4o-mini") -> Scorer:
    """A one-step judge scorer against an OpenAI-compatible endpoint (priced by the table)."""
    return Scorer(
        "judge",
        judge=JudgeConfig(
            model=OpenAICompatibleModel(model, base_url=base_url, timeout_s=5.0),
            instructions="Rate the answer.",
        ),
    ).score(judge_step(lambda ctx: f"Answer: {ctx.call.output}"))


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stored(db: str, name: str) -> tuple[dict[str, Any], list[Any]]:
    with open_store(db) as store:
        run_id = store.live.run_ids(name)[0]
        return store.live.state(run_id), list(store.runs.results(run_id))


def test_sync_async_and_target_return_and_raise_as_before(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"

    @monitor(scorers=["exact-match"], rate=1.0, store=db, name="sync")
    def shout(text: str) -> str:
        if text == "boom":
            raise KeyError("boom")
        return text.upper()

    @monitor(scorers=["exact-match"], rate=1.0, store=db, name="async")
    async def whisper(text: str, *, suffix: str = "") -> str:
        return text.lower() + suffix

    target = monitor(
        CallableTarget(lambda text: text[::-1]), scorers=["exact-match"], rate=1.0, store=db
    )
    assert shout("hi") == "HI"
    with pytest.raises(KeyError, match="boom"):
        shout("boom")
    assert asyncio.run(whisper("HI", suffix="!")) == "hi!"
    out = asyncio.run(target.execute(Item(id="item-1", input="abc", expected_output="cba")))
    assert out.output == "cba"
    for mon in (shout.monitor, whisper.monitor, target.monitor):
        assert mon.flush(10)
        mon.close()
    _, rows = stored(db, "sync")
    assert [(r.input, r.output) for r in rows] == [("hi", "HI")]  # the raising call: nothing
    _, rows = stored(db, "async")
    assert rows[0].input == {"args": ["HI"], "kwargs": {"suffix": "!"}}
    state, rows = stored(db, target.spec.label)
    assert [r.item_id for r in rows] == ["item-1"]
    assert rows[0].scores["exact-match"].score == 1.0  # scored against expected_output
    assert totals(state["counts"])["scored"] == 1


class SupportAgent:
    """An application's own agent class: an async ``generate`` plus its own attributes."""

    persona = "support"

    async def generate(self, question: str) -> str:
        if question == "boom":
            raise RuntimeError("agent failed")
        return f"{self.persona}: {question}"


class Pipeline:
    """A workflow with a plain (sync) ``run``."""

    def run(self, text: str) -> list[str]:
        return text.split()


def test_agent_and_workflow_objects_keep_their_method_and_are_observed(tmp_path: Path) -> None:
    from assay.targets.resolve import resolve_target

    db = f"sqlite:///{tmp_path / 'agent.db'}"
    agent = monitor(
        SupportAgent(),
        scorers=["exact-match"],
        rate=1.0,
        store=db,
        name="agent",
        observation_id=lambda q: f"q-{q}",
    )
    flow = monitor(Pipeline(), scorers=["exact-match"], rate=1.0, store=db, name="flow")
    assert agent.persona == "support"  # every other attribute is the agent's own
    assert asyncio.run(agent.generate("hi")) == "support: hi"
    with pytest.raises(RuntimeError, match="agent failed"):
        asyncio.run(agent.generate("boom"))
    assert flow.run("a b") == ["a", "b"]
    assert resolve_target(agent).spec.kind == "agent"  # still an agent to ``assay run``
    for mon in (agent.monitor, flow.monitor):
        assert mon.flush(10)
        mon.close()
    state, rows = stored(db, "agent")
    assert [(r.item_id, r.input, r.output) for r in rows] == [("q-hi", "hi", "support: hi")]
    assert totals(state["counts"])["scored"] == 1
    with open_store(db) as store:
        assert store.runs.get(store.live.run_ids("agent")[0]).info.target.kind == "agent"
    _, rows = stored(db, "flow")
    assert [(r.input, r.output) for r in rows] == [("a b", ["a", "b"])]


def test_counts_add_up_with_filter_rate_and_duplicates(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'c.db'}"

    @monitor(
        scorers=["content-similarity"],
        rate=0.5,
        deterministic=True,
        filter=lambda inp, out: not inp.startswith("skip"),
        store=db,
        name="counted",
        observation_id=lambda text: f"obs-{text}",
    )
    def echo(text: str) -> str:
        return text

    texts = [f"t{i}" for i in range(200)] + [f"skip{i}" for i in range(30)]
    for text in texts + texts[:50]:  # the first 50 again: retries of the same observations
        echo(text)
    assert echo.monitor.flush(20)
    echo.monitor.close()
    state, rows = stored(db, "counted")
    counts = totals(state["counts"])
    sampled_ids = {f"obs-t{i}" for i in range(200) if id_fraction(f"obs-t{i}") < 0.5}
    repeats = sum(1 for i in range(50) if f"obs-t{i}" in sampled_ids)
    assert counts["observed"] == 280
    assert counts["filtered_out"] == 30
    assert counts["eligible"] == 250 == counts["sampled"] + counts["not_sampled"]
    assert counts["sampled"] == len(sampled_ids) + repeats
    assert counts["scored"] == len(sampled_ids) and counts["duplicate"] == repeats
    assert {r.item_id for r in rows} == sampled_ids and len(rows) == len(sampled_ids)
    assert state["rate"] == 0.5 and echo.monitor.snapshot()["counts"] == counts
    sampled = {"decision": "sampled", "rate": 0.5, "deterministic": True}
    assert all(r.meta == {**sampled, "fate": "scored", "reason": None} for r in rows)


def test_each_stored_row_keeps_the_rate_it_was_sampled_at(live_db: str) -> None:
    """The run's state keeps the latest rate only; each row keeps its own decision and
    rate, so rows sampled before and after a rate change are told apart."""
    wrapped = monitor(
        lambda text: text,
        scorers=["exact-match"],
        rate=1.0,
        deterministic=True,
        store=live_db,
        name="rated",
        observation_id=lambda text: text,
    )
    for i in range(10):
        wrapped(f"a{i}")
    assert wrapped.monitor.flush(20)
    wrapped.monitor.rate = 0.25  # turned down while the application runs
    for i in range(60):
        wrapped(f"b{i}")
    assert wrapped.monitor.flush(20)
    wrapped.monitor.close()
    state, rows = stored(live_db, "rated")
    assert state["rate"] == 0.25
    at_full = {r.item_id for r in rows if (r.meta or {}).get("rate") == 1.0}
    at_quarter = {r.item_id for r in rows if (r.meta or {}).get("rate") == 0.25}
    assert at_full == {f"a{i}" for i in range(10)}
    assert at_quarter == {f"b{i}" for i in range(60) if id_fraction(f"b{i}") < 0.25}
    assert len(rows) == len(at_full) + len(at_quarter)  # no row without its rate
    assert all(
        r.meta is not None
        and (r.meta["decision"], r.meta["deterministic"], r.meta["fate"])
        == ("sampled", True, "scored")
        for r in rows
    )


def test_a_raising_filter_or_id_function_never_reaches_the_caller(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'hostile.db'}"

    def picky(inp: str, out: str) -> bool:
        if inp == "bad":
            raise ValueError("filter broke")
        return True

    def id_of(text: str) -> str:
        if text == "no-id":
            raise RuntimeError("id broke")
        return f"id-{text}"

    wrapped = monitor(
        lambda text: text + "!",
        scorers=["exact-match"],
        rate=1.0,
        filter=picky,
        observation_id=id_of,
        store=db,
        name="hostile",
    )
    assert [wrapped(t) for t in ("ok", "bad", "no-id")] == ["ok!", "bad!", "no-id!"]
    assert wrapped.monitor.flush(10)
    wrapped.monitor.close()
    state, rows = stored(db, "hostile")
    counts = totals(state["counts"])
    assert counts["observed"] == 3 and counts["filter_error"] == 1 and counts["scored"] == 2
    ids = {r.item_id for r in rows}
    assert len(ids) == 2 and "id-ok" in ids
    (random_id,) = ids - {"id-ok"}
    assert len(random_id) == 32  # the call whose id function raised: a random id instead


def test_restart_stores_nothing_twice(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for _ in range(2):  # the second monitor is the restarted process
        wrapped = monitor(
            lambda text: text,
            scorers=["exact-match"],
            rate=1.0,
            store=db,
            name="restart",
            observation_id=lambda text: text,
        )
        for i in range(20):
            wrapped(f"x{i}")
        wrapped.monitor.close()
    state, rows = stored(db, "restart")
    assert len(rows) == 20 and len({r.item_id for r in rows}) == 20
    counts = totals(state["counts"])
    assert counts["scored"] == 20 and counts["duplicate"] == 20


def test_dead_judge_never_reaches_the_caller(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'd.db'}"
    wrapped = monitor(
        lambda text: text + "!",
        scorers=[judge(f"http://127.0.0.1:{closed_port()}/v1")],
        rate=1.0,
        store=db,
        name="dead-judge",
    )
    assert [wrapped(str(i)) for i in range(5)] == [f"{i}!" for i in range(5)]
    assert wrapped.monitor.flush(30)
    wrapped.monitor.close()
    state, rows = stored(db, "dead-judge")
    counts = totals(state["counts"])
    assert counts["failed"] == {"scorer_error": 5} and counts["scored"] == 0
    assert len(rows) == 5 and all(r.scores["judge"].status == "error" for r in rows)
    assert {(r.meta or {}).get("fate") for r in rows} == {"failed"}
    assert {(r.meta or {}).get("reason") for r in rows} == {"scorer_error"}


def test_judge_timeout_and_store_failure_never_reach_the_caller(tmp_path: Path) -> None:
    """A judge slower than its timeout fails the score, recorded; a store that cannot be
    opened at all leaves the caller untouched and every sampled call counted as
    ``failed: store_error`` (in memory: there is nowhere to write it)."""
    db = f"sqlite:///{tmp_path / 'slow.db'}"
    with MockOpenAIServer(latency_s=2.0) as server:
        slow = Scorer(
            "judge",
            judge=JudgeConfig(
                model=OpenAICompatibleModel("gpt-4o-mini", base_url=server.base_url, timeout_s=0.3),
                instructions="Rate the answer.",
            ),
        ).score(judge_step(lambda ctx: f"Answer: {ctx.call.output}"))
        timed = monitor(lambda text: text * 2, scorers=[slow], rate=1.0, store=db, name="slow")
        started = time.perf_counter()
        assert [timed(c) for c in "abc"] == ["aa", "bb", "cc"]
        assert time.perf_counter() - started < 0.3  # nobody waited for the judge
        assert timed.monitor.flush(30)
        timed.monitor.close()
    state, rows = stored(db, "slow")
    assert totals(state["counts"])["failed"] == {"scorer_error": 3}
    assert len(rows) == 3 and all(r.scores["judge"].status == "error" for r in rows)

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    broken = monitor(
        lambda text: text,
        scorers=["exact-match"],
        rate=1.0,
        store=f"sqlite:///{blocker / 'x.db'}",  # a folder inside a file: never opens
        name="no-store",
        flush_timeout_s=1.0,
    )
    assert [broken(str(i)) for i in range(4)] == ["0", "1", "2", "3"]
    assert broken.monitor.flush(5.0) is False  # says the write failed, never raises
    broken.monitor.close()
    counts = broken.monitor.snapshot()["counts"]
    assert counts["sampled"] == 4 and counts["failed"] == {"store_error": 4}
    assert counts["scored"] == 0  # a score that was never stored is not counted as stored


def test_budget_stops_judge_calls_and_records_the_skip(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'b.db'}"
    with MockOpenAIServer() as server:
        wrapped = monitor(
            lambda text: text,
            scorers=[judge(server.base_url)],
            rate=1.0,
            store=db,
            name="budgeted",
            budget_usd=1e-9,  # less than one call of gpt-4o-mini
            budget_window="hour",
            concurrency=1,
        )
        for i in range(6):
            wrapped(f"answer {i}")
        assert wrapped.monitor.flush(30)
        wrapped.monitor.close()
        calls = len(server.chat_requests)
    state, rows = stored(db, "budgeted")
    counts = totals(state["counts"])
    assert calls == 1 == counts["scored"]  # the first call crossed it; none after
    assert counts["dropped"] == {"budget": 5}
    skipped = [r for r in rows if not r.scores]
    assert len(skipped) == 5 and all("budget" in r.warnings[0] for r in skipped)
    assert state["budget"]["spent_usd"] > 1e-9
    # each row says it was sampled, at which rate, and why it has no score
    (scored,) = [r for r in rows if r.scores]
    assert scored.meta == {
        "decision": "sampled",
        "rate": 1.0,
        "deterministic": False,
        "fate": "scored",
        "reason": None,
    }
    assert all(r.meta == {**scored.meta, "fate": "dropped", "reason": "budget"} for r in skipped)


def test_full_queue_drops_without_blocking(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with MockOpenAIServer(latency_s=1.0) as server:
        wrapped = monitor(
            lambda text: text,
            scorers=[judge(server.base_url)],
            rate=1.0,
            store=db,
            name="full",
            queue_size=2,
            concurrency=1,
        )
        started = time.perf_counter()
        for i in range(10):
            wrapped(f"a{i}")
        elapsed = time.perf_counter() - started
        snapshot = wrapped.monitor.snapshot()
        assert wrapped.monitor.flush(30)
        wrapped.monitor.close()
    assert elapsed < 1.0  # ten calls did not wait for one 1-second judge answer
    assert snapshot["counts"]["dropped"] == {"queue_full": 8}
    counts = totals(stored(db, "full")[0]["counts"])
    assert counts["scored"] == 2 and counts["sampled"] == 10


def test_close_records_what_was_not_scored(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    with MockOpenAIServer(latency_s=2.0) as server:
        mon_fn = monitor(
            lambda text: text,
            scorers=[judge(server.base_url)],
            rate=1.0,
            store=db,
            name="shutdown",
            concurrency=1,
            flush_timeout_s=0.5,
        )
        for i in range(3):
            mon_fn(f"s{i}")
        mon: Monitor = mon_fn.monitor
        started = time.monotonic()
        mon.close()
        assert time.monotonic() - started < 5.0  # bounded by flush_timeout_s, not the judge
        mon_fn("after close")  # counted, never raised
    state, rows = stored(db, "shutdown")
    counts = totals(state["counts"])
    assert counts["dropped"] == {"shutdown": 3} and counts["sampled"] == 3
    assert mon.snapshot()["counts"]["dropped"] == {"shutdown": 4}  # the late call: in memory
    assert len(rows) == 3 and all("exited" in r.warnings[0] for r in rows)
    assert all((r.meta or {}).get("reason") == "shutdown" for r in rows)


def test_runs_list_shows_the_live_run_after_the_process_exits(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    script = (
        "import assay\n"
        "f = assay.monitor(lambda x: x, scorers=['exact-match'], rate=1.0, name='svc')\n"
        "for i in range(7): f(str(i))\n"
    )
    env = {"PYTHONPATH": str(SRC), "ASSAY_DATABASE_URL": db, "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    listed = subprocess.run(
        [sys.executable, "-m", "assay", "runs", "list", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    (record,) = json.loads(listed.stdout)
    assert record["info"]["name"] == "svc" and record["info"]["data_source"] == "live"
    assert record["completed_results"] == 7 and record["status"] == "completed"
    status = subprocess.run(
        [sys.executable, "-m", "assay", "live", "status", "svc", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["counts"]["scored"] == 7


def test_exit_with_a_slow_judge_is_bounded_and_records_what_was_not_scored(
    tmp_path: Path,
) -> None:
    """The real exit path (``atexit``, no ``close()`` call): a judge that would answer in
    60 s does not hold the process; the observations it was scoring are stored as not
    scored (``dropped: shutdown``), with counts that add up."""
    db = f"sqlite:///{tmp_path / 'exit.db'}"
    script = (
        "import sys, assay\n"
        "from assay.models.openai_compat import OpenAICompatibleModel\n"
        "from assay.scoring.scorer import Scorer\n"
        "from assay.scoring.steps import JudgeConfig, judge_step\n"
        "judge = Scorer('judge', judge=JudgeConfig(model=OpenAICompatibleModel('gpt-4o-mini', "
        "base_url=sys.argv[1], timeout_s=120.0), instructions='Rate.'))"
        ".score(judge_step(lambda ctx: str(ctx.call.output)))\n"
        "f = assay.monitor(lambda x: x, scorers=[judge], rate=1.0, name='exiting', "
        "flush_timeout_s=0.5, observation_id=lambda x: x)\n"
        "print([f(f'q{i}') for i in range(3)], flush=True)\n"
        "import time; time.sleep(0.3)  # the judge calls are under way\n"
    )
    env = {"PYTHONPATH": str(SRC), "ASSAY_DATABASE_URL": db, "PATH": "/usr/bin:/bin"}
    with MockOpenAIServer(latency_s=60.0) as server:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", script, server.base_url],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['q0', 'q1', 'q2']"
    assert took < 45.0  # far below the judge's 60 s: the exit did not wait for it
    state, rows = stored(db, "exiting")
    counts = totals(state["counts"])
    assert counts["sampled"] == 3 == counts["dropped"].get("shutdown")
    assert sorted(r.item_id for r in rows) == ["q0", "q1", "q2"]
    assert all("exited" in r.warnings[0] and not r.scores for r in rows)


def test_caller_threads_share_one_monitor(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    wrapped = monitor(lambda text: text, scorers=["exact-match"], rate=1.0, store=db, name="mt")

    def hammer(k: int) -> None:
        for i in range(100):
            wrapped(f"{k}-{i}")

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrapped.monitor.flush(30)
    wrapped.monitor.close()
    state, rows = stored(db, "mt")
    counts = totals(state["counts"])
    assert counts["observed"] == 400 == counts["scored"] + sum(counts["dropped"].values())
    assert len(rows) == counts["scored"]


APP = """
import contextlib
import sys
import uvicorn
from fastapi import FastAPI
import assay
from assay.models.openai_compat import OpenAICompatibleModel
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step

judge = Scorer(
    "judge",
    judge=JudgeConfig(
        model=OpenAICompatibleModel("gpt-4o-mini", base_url=sys.argv[2], timeout_s=10.0),
        instructions="Rate the answer.",
    ),
).score(judge_step(lambda ctx: f"Answer: {ctx.call.output}"))

@contextlib.asynccontextmanager
async def lifespan(app):
    yield
    answer.monitor.close()  # uvicorn re-raises SIGTERM after shutdown: atexit would not run


app = FastAPI(lifespan=lifespan)


@assay.monitor(
    scorers=[judge, "exact-match"], rate=1.0, name="web", concurrency=4,
    observation_id=lambda q, rid: rid, flush_timeout_s=10.0,
)
def answer(q: str, rid: str) -> str:
    return q[::-1]


@app.get("/ask")
def ask(q: str, rid: str) -> dict[str, str]:
    return {"answer": answer(q, rid)}


@app.get("/health")
def health() -> dict[str, bool]:
    return {"ok": True}


uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def _serve(tmp_path: Path, db: str, judge_url: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = closed_port()
    script = tmp_path / "app.py"
    script.write_text(APP)
    env = {"PYTHONPATH": str(SRC), "ASSAY_DATABASE_URL": db, "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, str(script), str(port), judge_url], env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the app did not start")


def _ask(base: str, ids: range) -> None:
    import httpx

    with httpx.Client(timeout=10.0) as client:
        for i in ids:
            reply = client.get(f"{base}/ask", params={"q": f"question {i}", "rid": f"r{i}"})
            assert reply.status_code == 200
            assert reply.json() == {"answer": f"question {i}"[::-1]}


def test_web_app_killed_mid_stream_then_restarted(tmp_path: Path) -> None:
    """A FastAPI app under uvicorn, every call monitored against a slow judge: SIGKILL
    leaves only whole rows; after a restart that replays every request, each request id is
    stored exactly once and the counters add up."""
    import signal

    db = f"sqlite:///{tmp_path / 'web.db'}"
    with MockOpenAIServer(latency_s=0.3) as server:
        proc, base = _serve(tmp_path, db, server.base_url)
        try:
            _ask(base, range(40))
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # some rows stored, most still queued
                with open_store(db) as store:
                    ids = store.live.run_ids("web")
                    if ids and store.runs.get(ids[0]).completed_results >= 4:
                        break
                time.sleep(0.1)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        with open_store(db) as store:
            run_id = store.live.run_ids("web")[0]
            record = store.runs.get(run_id)
            rows = list(store.runs.results(run_id))
            counts = totals(store.live.state(run_id).get("counts") or {})
        killed_rows = len(rows)
        assert 0 < killed_rows < 40 and record.completed_results == killed_rows
        assert all(set(r.scores) == {"judge", "exact-match"} for r in rows)  # whole rows
        # counters go in the transaction of their rows: what a kill leaves agrees exactly
        assert counts["sampled"] == killed_rows == counts["eligible"] == counts["observed"]
        assert counts["duplicate"] == 0

        proc, base = _serve(tmp_path, db, server.base_url)
        try:
            _ask(base, range(40))  # the replay: every request again, same ids
        finally:
            proc.send_signal(signal.SIGTERM)  # uvicorn stops, the lifespan closes the monitor
            assert proc.wait(60) in (0, -signal.SIGTERM)
    with open_store(db) as store:
        rows = list(store.runs.results(run_id))
        record = store.runs.get(run_id)
        counts = totals(store.live.state(run_id)["counts"])
    assert sorted(r.item_id for r in rows) == sorted(f"r{i}" for i in range(40))
    assert record.completed_results == 40 and record.status == "completed"
    assert all(r.scores["judge"].status == "ready" for r in rows)
    # the second process saw 40 calls: the ids the first one stored are duplicates
    assert counts["duplicate"] == killed_rows
    assert counts["scored"] == 40 and counts["sampled"] == killed_rows + 40
    fated = counts["scored"] + counts["duplicate"]
    assert counts["sampled"] == fated + sum(counts["dropped"].values()) + sum(
        counts["failed"].values()
    )


def test_callers_racing_with_close_lose_no_observation(tmp_path: Path) -> None:
    """Callers append to the inbox without waking the worker; those appending while
    ``close`` drains it still get a fate (scored, or dropped: shutdown), none is lost."""
    db = f"sqlite:///{tmp_path / 'race.db'}"
    mon_fn = monitor(
        lambda text: text,
        scorers=["exact-match"],
        rate=1.0,
        store=db,
        name="race",
        queue_size=100_000,
        flush_timeout_s=1.0,
    )
    mon: Monitor = mon_fn.monitor
    go = threading.Event()

    def hammer(k: int) -> None:
        go.wait()
        for i in range(3000):
            mon_fn(f"{k}-{i}")

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    go.set()
    time.sleep(0.05)
    mon.close()
    for thread in threads:
        thread.join()
    snap = mon.snapshot()
    counts = snap["counts"]
    assert snap["in_flight"] == 0  # every slot taken was given back
    assert counts["observed"] == 12_000 == counts["sampled"]
    fated = counts["scored"] + sum(counts["dropped"].values()) + sum(counts["failed"].values())
    assert counts["sampled"] == fated  # in memory: every call has a fate
    state, rows = stored(db, "race")
    saved = totals(state["counts"])
    saved_fated = saved["scored"] + sum(saved["dropped"].values()) + sum(saved["failed"].values())
    assert saved["sampled"] == saved_fated  # stored counters add up too
    assert len(rows) == len({r.item_id for r in rows})  # one row per observation
    scored_rows = [r for r in rows if not r.warnings]
    assert len(scored_rows) == saved["scored"] == counts["scored"] > 0
    assert all("exited" in r.warnings[0] for r in rows if r.warnings)
