"""Retries, backoff, Retry-After, time bounds, timeouts and the AIMD limiter, over real HTTP."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from pydantic import BaseModel

from assay.models.base import (
    ChatMessage,
    ModelError,
    ModelRateLimitError,
    ModelSettings,
    ModelTimeoutError,
)
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.reliability import (
    AdaptiveLimiter,
    ReliabilityStats,
    ReliableModel,
    RetryPolicy,
    limiter_for,
    parse_retry_after,
)
from assay.testing.openai_server import MockOpenAIServer, MockReply
from assay.testing.scripted import ScriptedModel

MESSAGES = [ChatMessage(role="user", content="judge this")]
FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


def _reliable(
    server: MockOpenAIServer, policy: RetryPolicy = FAST, **kwargs: object
) -> ReliableModel:
    inner = OpenAICompatibleModel("mock", base_url=server.base_url, provider="mock")
    return ReliableModel(inner, policy=policy, rng=random.Random(1), **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- Retry-After
def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    future = datetime.now(UTC) + timedelta(seconds=30)
    parsed = parse_retry_after({"retry-after": format_datetime(future, usegmt=True)})
    assert parsed is not None and 25 <= parsed <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-1"}) is None
    assert parse_retry_after({}) is None


async def test_429_then_success_honours_retry_after(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=429, headers={"Retry-After": "1"}), MockReply("fine"))
    model = _reliable(server)
    started = time.monotonic()
    response = await model.generate(MESSAGES)
    elapsed = time.monotonic() - started
    assert response.text == "fine"
    assert response.attempts == 2
    assert 1.0 <= elapsed < 3.0  # waited the server's second, not the 10 ms backoff
    assert model.stats.retries == 1 and model.stats.throttles == 1
    assert len(server.chat_requests) == 2


async def test_retry_after_is_capped(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=429, headers={"Retry-After": "3600"}), MockReply("fine"))
    policy = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_retry_after_s=0.3)
    started = time.monotonic()
    response = await _reliable(server, policy).generate(MESSAGES)
    elapsed = time.monotonic() - started
    assert response.text == "fine"
    assert 0.3 <= elapsed < 2.0


async def test_a_wait_beyond_the_total_budget_fails_at_once(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=429, headers={"Retry-After": "3600"}))
    policy = RetryPolicy(total_timeout_s=2.0, max_retry_after_s=3600)
    started = time.monotonic()
    with pytest.raises(ModelError, match="gave up after 1 attempt") as info:
        await _reliable(server, policy).generate(MESSAGES)
    assert time.monotonic() - started < 1.0
    assert info.value.status_code == 429
    assert len(server.chat_requests) == 1


# ---------------------------------------------------------------------- bounds
async def test_total_time_is_bounded(server: MockOpenAIServer) -> None:
    server.responder = lambda body: MockReply(status=503)
    policy = RetryPolicy(max_attempts=1000, total_timeout_s=1.0, base_delay_s=0.05, max_delay_s=0.1)
    model = _reliable(server, policy)
    started = time.monotonic()
    with pytest.raises(ModelError, match="gave up"):
        await model.generate(MESSAGES)
    elapsed = time.monotonic() - started
    assert elapsed < 1.5
    assert 3 <= model.stats.attempts < 1000
    assert model.stats.failures == 1


async def test_attempts_are_bounded(server: MockOpenAIServer) -> None:
    server.responder = lambda body: MockReply(status=503)
    model = _reliable(server, RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02))
    with pytest.raises(ModelError, match="after 3 attempt") as info:
        await model.generate(MESSAGES)
    assert len(server.chat_requests) == 3
    assert model.stats.retries == 2 and model.stats.throttles == 3
    assert isinstance(info.value.__cause__, ModelError)
    assert info.value.status_code == 503


async def test_permanent_errors_are_not_retried(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=400, error="bad request"))
    model = _reliable(server)
    with pytest.raises(ModelError, match="bad request") as info:
        await model.generate(MESSAGES)
    assert info.value.status_code == 400
    assert len(server.chat_requests) == 1 and model.stats.retries == 0


async def test_timeouts_become_model_errors() -> None:
    with MockOpenAIServer(latency_s=3.0) as server:
        policy = RetryPolicy(
            max_attempts=2, call_timeout_s=0.2, base_delay_s=0.01, max_delay_s=0.02
        )
        model = _reliable(server, policy)
        started = time.monotonic()
        with pytest.raises(ModelError, match="after 2 attempt") as info:
            await model.generate(MESSAGES)
        assert time.monotonic() - started < 1.5
        assert isinstance(info.value.__cause__, ModelTimeoutError)
        assert model.stats.timeouts == 2
        # ModelSettings.timeout_s overrides the policy's per-call timeout
        slow_policy = RetryPolicy(max_attempts=1, call_timeout_s=30.0)
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError):
            await _reliable(server, slow_policy).generate(
                MESSAGES, settings=ModelSettings(timeout_s=0.2)
            )
        assert time.monotonic() - started < 1.5


async def test_scripted_throttles_are_retried_without_a_server() -> None:
    scripted = ScriptedModel(script=[ModelRateLimitError("slow down", retry_after_s=0.05), "ok"])
    model = ReliableModel(scripted, policy=FAST)
    response = await model.generate(MESSAGES)
    assert response.text == "ok" and response.attempts == 2
    assert model.stats.throttles == 1 and len(scripted.calls) == 2


# ---------------------------------------------------------------------- limiter (unit)
async def test_limiter_bounds_concurrency_in_fifo_order() -> None:
    limiter = AdaptiveLimiter(2, minimum=1, maximum=4)
    active = 0
    peak = 0
    order: list[int] = []

    async def job(i: int) -> None:
        nonlocal active, peak
        async with limiter.slot():
            order.append(i)
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    await asyncio.gather(*(job(i) for i in range(8)))
    assert peak == 2 and limiter.peak_in_flight == 2
    assert order == list(range(8))
    assert limiter.in_flight == 0


async def test_limiter_halves_once_per_overload_and_respects_bounds() -> None:
    limiter = AdaptiveLimiter(16, minimum=2, maximum=64, tolerance=0.0)
    early_a = await limiter.acquire()
    early_b = await limiter.acquire()
    limiter.on_throttle(early_a)
    assert limiter.limit == 8
    limiter.on_throttle(early_b)  # sent before the decrease: the same overload
    assert limiter.limit == 8 and limiter.throttles == 2 and limiter.decreases == 1
    limiter.release()
    limiter.release()
    for _ in range(10):
        ticket = await asyncio.wait_for(limiter.acquire(), 1.0)
        limiter.on_throttle(ticket)
        limiter.release()
    assert limiter.limit == 2  # the floor
    assert limiter.in_flight == 0


async def test_limiter_slow_start_then_additive_increase() -> None:
    limiter = AdaptiveLimiter(4, maximum=10, tolerance=0.0, min_window=1)
    for _ in range(4):
        limiter.on_success(0)
    assert limiter.limit == 8  # slow start: doubles per clean window
    ticket = await limiter.acquire()
    limiter.on_throttle(ticket)
    limiter.release()
    assert limiter.limit == 4
    for _ in range(3):
        limiter.on_success(ticket)
    assert limiter.limit == 4  # congestion avoidance: +1 per window of `limit` answers
    limiter.on_success(ticket)
    assert limiter.limit == 5
    for _ in range(200):
        limiter.on_success(ticket)
    assert limiter.limit == 10  # the ceiling


async def test_sporadic_throttles_within_tolerance_do_not_shrink_the_limit() -> None:
    limiter = AdaptiveLimiter(20, maximum=64, tolerance=0.2)
    tickets = [await limiter.acquire() for _ in range(20)]
    for ticket in tickets[:4]:  # 4 of 20 = 20%: noise, not overload
        limiter.on_throttle(ticket)
    for ticket in tickets[4:]:
        limiter.on_success(ticket)
        limiter.release()
    assert limiter.decreases == 0 and limiter.limit > 20
    for _ in range(4):
        limiter.release()
    overloaded = [await limiter.acquire() for _ in range(limiter.limit)]
    window = limiter.limit
    for ticket in overloaded[: int(0.2 * window) + 1]:  # just over 20%: overload
        limiter.on_throttle(ticket)
    assert limiter.decreases == 1 and limiter.limit == window // 2


async def test_cancelled_waiters_do_not_leak_slots() -> None:
    limiter = AdaptiveLimiter(1)
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    limiter.release()
    assert limiter.in_flight == 0
    await asyncio.wait_for(limiter.acquire(), 1.0)
    assert limiter.in_flight == 1


def test_limiter_rejects_inconsistent_bounds() -> None:
    with pytest.raises(ValueError):
        AdaptiveLimiter(0)
    with pytest.raises(ValueError):
        AdaptiveLimiter(8, minimum=1, maximum=4)


# ---------------------------------------------------------------------- limiter (HTTP)
async def test_limit_shrinks_on_429s_and_recovers() -> None:
    with MockOpenAIServer(latency_s=0.03, max_concurrency=4, retry_after="0") as server:
        limiter = AdaptiveLimiter(16, maximum=64)
        policy = RetryPolicy(max_attempts=30, base_delay_s=0.01, max_delay_s=0.05)
        model = _reliable(server, policy, limiter=limiter)
        results = await asyncio.gather(*(model.generate(MESSAGES) for _ in range(60)))
        assert len(results) == 60 and all(r.text == "ok" for r in results)
        rejected = server.statuses[429]
        assert rejected > 0
        assert model.stats.throttles == rejected == limiter.throttles
        assert limiter.decreases >= 1
        shrunk = limiter.limit
        assert shrunk <= 8

        server.max_concurrency = None  # the overload is over
        await asyncio.gather(*(model.generate(MESSAGES) for _ in range(150)))
        assert limiter.limit > shrunk
        assert server.statuses[429] == rejected


async def test_models_of_one_endpoint_share_its_limiter(server: MockOpenAIServer) -> None:
    first = _reliable(server)
    second = _reliable(server)
    assert first.limiter is second.limiter is limiter_for(server.base_url)


# ---------------------------------------------------------------------- where the limit starts
async def test_limiter_starts_at_the_run_concurrency_but_never_lower_or_past_the_ceiling() -> None:
    limiter = AdaptiveLimiter(16, maximum=64)
    limiter.start_at(32)
    assert limiter.limit == 32
    limiter.start_at(8)  # a smaller run does not shrink a healthy endpoint's limit
    assert limiter.limit == 32
    limiter.start_at(500)
    assert limiter.limit == 64


async def test_limiter_does_not_jump_back_up_after_the_endpoint_throttled() -> None:
    limiter = AdaptiveLimiter(16, maximum=64, tolerance=0.0)
    limiter.start_at(32)
    ticket = await limiter.acquire()
    limiter.on_throttle(ticket)
    limiter.release()
    assert limiter.limit == 16 and limiter.decreases == 1
    limiter.start_at(32)
    assert limiter.limit == 16  # the backed-off limit stands


async def test_limiter_start_wakes_queued_callers() -> None:
    limiter = AdaptiveLimiter(1, maximum=8)
    first = await limiter.acquire()
    waiting = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0)
    assert not waiting.done()
    limiter.start_at(4)
    assert await asyncio.wait_for(waiting, 1.0) == first
    assert limiter.in_flight == 2


def test_a_run_starts_the_limiter_at_its_concurrency_and_still_backs_off() -> None:
    """Through ``run_evals``: a judge scorer on a ``ReliableModel`` whose endpoint limiter
    starts at 2 has 12 calls in flight at once in a run of concurrency 12; a run whose
    endpoint answers with 429s halves the limit all the same."""
    import assay
    from assay.runner.api import run_evals

    def judged(model: ReliableModel) -> assay.Scorer:
        judge = assay.JudgeConfig(model=model, instructions="You judge.")
        return (
            assay.Scorer("echo-judge", judge=judge)
            .preprocess(assay.judge_step(lambda ctx: f"judge {ctx.output_text}", _Verdict))
            .score(lambda ctx: float(ctx.preprocess_result.ok))
        )

    limiter = AdaptiveLimiter(2, maximum=64)
    slow = ScriptedModel(responder=lambda *_: '{"ok": true}', delay_s=0.05)
    data = [{"id": f"i{n}", "input": "q", "output": f"a{n}"} for n in range(36)]
    run = run_evals(data, None, [judged(ReliableModel(slow, limiter=limiter))], concurrency=12)
    assert all(r.scores["echo-judge"].score == 1.0 for r in run.results)
    assert limiter.peak_in_flight == 12 and limiter.limit >= 12

    throttled = AdaptiveLimiter(2, maximum=64, tolerance=0.0)
    replies = iter([ModelRateLimitError("slow down", retry_after_s=0.01)] * 6)

    def answer(*_: object) -> str:
        reply = next(replies, None)
        if reply is not None:
            raise reply
        return '{"ok": true}'

    busy = ScriptedModel(responder=answer, delay_s=0.01)
    model = ReliableModel(busy, policy=FAST, limiter=throttled)
    run = run_evals(data, None, [judged(model)], concurrency=12)
    assert all(r.scores["echo-judge"].score == 1.0 for r in run.results)
    assert throttled.peak_in_flight == 12 and throttled.decreases >= 1


class _Verdict(BaseModel):
    ok: bool


def test_reliability_stats_as_dict_names_every_counter_and_rounds_the_wait() -> None:
    stats = ReliabilityStats(7, 6, 5, 4, 3, 2, retry_wait_s=1.23456)
    assert stats.as_dict() == {
        "calls": 7,
        "attempts": 6,
        "retries": 5,
        "throttles": 4,
        "timeouts": 3,
        "failures": 2,
        "retry_wait_s": 1.235,
    }
