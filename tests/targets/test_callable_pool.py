"""The worker pool plain ``def`` targets run on: isolation, order, cancellation, context."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from assay.runner.api import run_evals
from assay.targets.callable_pool import CallPool

REQUEST = contextvars.ContextVar("REQUEST", default="unset")


def test_results_come_back_to_their_own_callers_in_any_order() -> None:
    pool = CallPool()

    async def main() -> list[int]:
        return await asyncio.gather(*(pool.run(lambda n=n: n * n) for n in range(500)))

    assert asyncio.run(main()) == [n * n for n in range(500)]


def test_an_exception_fails_only_its_own_call() -> None:
    pool = CallPool()

    def maybe_fail(n: int) -> int:
        if n % 7 == 3:
            raise ValueError(f"bad {n}")
        return n

    async def main() -> list[int | BaseException]:
        return await asyncio.gather(
            *(pool.run(maybe_fail, n) for n in range(100)), return_exceptions=True
        )

    outcomes = asyncio.run(main())
    for n, outcome in enumerate(outcomes):
        if n % 7 == 3:
            assert isinstance(outcome, ValueError) and str(outcome) == f"bad {n}"
        else:
            assert outcome == n


def test_blocking_calls_run_side_by_side() -> None:
    """A blocking call must not hold up the calls queued behind it: 8 calls of 0.2 s
    finish in about 0.2 s, not 1.6 s."""
    pool = CallPool()

    async def main() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(pool.run(time.sleep, 0.2) for _ in range(8)))
        return time.perf_counter() - started

    assert asyncio.run(main()) < 0.8
    assert pool.threads >= 8


def test_a_hung_call_does_not_block_later_calls() -> None:
    pool = CallPool()
    release = threading.Event()

    async def main() -> tuple[str, bool]:
        hung = asyncio.ensure_future(pool.run(release.wait, 30))
        await asyncio.sleep(0.05)  # the hung call has started on its thread
        later = await asyncio.wait_for(pool.run(lambda: "later"), timeout=2)
        done = hung.done()
        hung.cancel()
        return later, done

    try:
        later, hung_done = asyncio.run(main())
    finally:
        release.set()
    assert later == "later" and not hung_done


def test_a_cancelled_queued_call_never_runs() -> None:
    pool = CallPool(max_idle=1)
    ran: list[int] = []
    gate = threading.Event()

    async def main() -> None:
        first = asyncio.ensure_future(pool.run(gate.wait, 5))
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(pool.run(ran.append, n)) for n in range(50)]
        for task in queued:
            task.cancel()
        gate.set()
        await first
        await asyncio.gather(*queued, return_exceptions=True)
        await asyncio.sleep(0.1)  # anything still queued would have run by now

    asyncio.run(main())
    assert len(ran) < 50  # at most the calls a thread took before they were cancelled


def test_calls_see_the_callers_context_variables() -> None:
    pool = CallPool()

    async def one(value: str) -> str:
        REQUEST.set(value)
        return await pool.run(REQUEST.get)

    async def main() -> list[str]:
        return await asyncio.gather(*(one(f"r{n}") for n in range(40)))

    assert asyncio.run(main()) == [f"r{n}" for n in range(40)]
    assert REQUEST.get() == "unset"


def test_calls_run_on_pool_threads_not_the_event_loop() -> None:
    pool = CallPool()

    async def main() -> set[str]:
        names = await asyncio.gather(
            *(pool.run(lambda: threading.current_thread().name) for _ in range(20))
        )
        return set(names)

    names = asyncio.run(main())
    assert names and all(name.startswith("assay-target-") for name in names)
    assert threading.main_thread().name not in names


def test_max_idle_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_idle"):
        CallPool(max_idle=0)


def test_def_target_through_run_evals_isolates_errors_and_keeps_order() -> None:
    def answer(question: str) -> str:
        if question.endswith("3"):
            raise RuntimeError(f"no answer for {question}")
        return question.upper()

    data = [{"id": f"i{n}", "input": f"q{n}", "expected_output": f"Q{n}"} for n in range(40)]
    run = run_evals(data, answer, ["exact-match"], concurrency=8, progress=False)
    assert [r.item_id for r in run.results] == [f"i{n}" for n in range(40)]
    for n, result in enumerate(run.results):
        if n % 10 == 3:
            assert result.error is not None and result.error.kind == "RuntimeError"
            assert f"q{n}" in result.error.message and not result.scores
        else:
            assert result.error is None and result.output == f"Q{n}"
            assert result.scores["exact-match"].score == 1.0
    assert run.summary.item_errors == 4


def test_a_hung_def_target_times_out_its_item_only() -> None:
    release = threading.Event()

    def answer(question: str) -> str:
        if question == "hang":
            release.wait(30)
        return question

    data = [{"id": q, "input": q} for q in ("a", "hang", "b", "c")]
    try:
        run = run_evals(data, answer, concurrency=2, timeout_s=0.3, progress=False)
    finally:
        release.set()
    errors = {r.item_id: r.error for r in run.results}
    assert errors["hang"] is not None and errors["hang"].kind == "TimeoutError"
    assert [errors[q] for q in ("a", "b", "c")] == [None, None, None]
