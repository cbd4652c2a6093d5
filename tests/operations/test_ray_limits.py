"""``RunLimits``, the body of the run-wide limiter actor, driven directly on one event loop
(what the async actor does with its calls); through real Ray workers in
``test_ray_backend.py``."""

from __future__ import annotations

import asyncio
import time

import pytest

from assay.operations.ray_limits import LimitsHost, RunLimits


async def _one(limits: RunLimits, endpoint: str, holder: str = "w") -> int:
    (slot,) = await limits.acquire(endpoint, holder)
    return slot


async def _call(limits: RunLimits, endpoint: str, seconds: float, seen: list[int]) -> None:
    slot = await _one(limits, endpoint)
    seen.append(limits.stats()["endpoints"][endpoint]["in_flight"])
    await asyncio.sleep(seconds)
    limits.done(slot, "ok")


def test_slots_never_exceed_the_ceiling_and_endpoints_are_apart() -> None:
    async def scenario() -> RunLimits:
        limits = RunLimits(3)
        seen: list[int] = []
        calls = [_call(limits, "a", 0.02, seen) for _ in range(20)]
        calls += [_call(limits, "b", 0.02, seen) for _ in range(5)]
        await asyncio.wait_for(asyncio.gather(*calls), timeout=10)
        assert max(seen) == 3
        return limits

    stats = asyncio.run(scenario()).stats()
    assert stats["granted"] == 25
    assert stats["endpoints"]["a"]["peak_in_flight"] == 3
    assert stats["endpoints"]["b"]["peak_in_flight"] == 3
    assert stats["endpoints"]["a"]["in_flight"] == 0


def test_a_retry_after_pauses_every_caller_of_that_endpoint() -> None:
    async def scenario() -> tuple[float, float, RunLimits]:
        limits = RunLimits(8)
        slot = await _one(limits, "a")
        limits.done(slot, "throttle", 0.3)
        started = time.monotonic()
        other = await asyncio.wait_for(_one(limits, "b"), timeout=5)  # not paused
        b_wait = time.monotonic() - started
        limits.done(other, "ok")
        granted = await asyncio.wait_for(_one(limits, "a"), timeout=5)
        a_wait = time.monotonic() - started
        limits.done(granted, "ok")
        return a_wait, b_wait, limits

    a_wait, b_wait, limits = asyncio.run(scenario())
    assert a_wait >= 0.25
    assert b_wait < 0.2
    assert limits.stats()["pauses"] == 1
    assert limits.stats()["endpoints"]["a"]["throttles"] == 1


def test_a_huge_retry_after_is_capped() -> None:
    async def scenario() -> float:
        limits = RunLimits(2, max_pause_s=0.2)
        limits.done(await _one(limits, "a"), "throttle", 3600.0)
        started = time.monotonic()
        limits.done(await asyncio.wait_for(_one(limits, "a"), timeout=5), "ok")
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 1.0


def test_the_request_rate_spaces_grants() -> None:
    async def scenario() -> float:
        limits = RunLimits(8, rate_per_s=20.0)
        started = time.monotonic()
        slots = [await asyncio.wait_for(_one(limits, "a"), timeout=5) for _ in range(6)]
        elapsed = time.monotonic() - started
        for slot in slots:
            limits.done(slot, "ok")
        return elapsed

    assert asyncio.run(scenario()) >= 5 / 20 - 0.02


def test_the_slots_of_a_holder_gone_silent_are_taken_back() -> None:
    async def scenario() -> RunLimits:
        limits = RunLimits(1, slot_lease_s=0.1)
        await _one(limits, "a", "dead")  # never given back: its worker died
        await asyncio.sleep(0.15)
        limits._swept = 0.0  # the sweep runs at most once a second: let it run now
        slot = await asyncio.wait_for(_one(limits, "a", "alive"), timeout=5)
        limits.done(slot, "ok")
        limits.done(slot, "ok")  # a second give-back of one slot changes nothing
        return limits

    stats = asyncio.run(scenario()).stats()
    assert stats["reclaimed"] == 1
    assert stats["endpoints"]["a"]["in_flight"] == 0


def test_a_bunch_of_free_slots_in_one_message_and_a_batched_report() -> None:
    async def scenario() -> tuple[list[int], list[int], tuple[int, float, bool], RunLimits]:
        limits = RunLimits(5)
        first = await limits.acquire("a", "w1", want=4)
        second = await limits.acquire("a", "w2", want=4)  # only one left
        waiting = asyncio.create_task(limits.acquire("a", "w3"))
        await asyncio.sleep(0.01)
        answer = limits.report(
            "a", "w1", [(first[0], "ok", None), (first[1], "throttle", 0.05)], first[:2]
        )
        await asyncio.wait_for(waiting, timeout=5)
        return first, second, answer, limits

    first, second, (epoch, pause_s, contended), limits = asyncio.run(scenario())
    assert (len(first), len(second)) == (4, 1)
    assert 0 < pause_s <= 0.05 and contended  # w3 was waiting when w1 reported
    assert epoch == 0  # one throttle in a window of 8 is within tolerance
    stats = limits.stats()
    assert stats["messages"] == 4 and stats["endpoints"]["a"]["throttles"] == 1
    assert stats["endpoints"]["a"]["in_flight"] == 4  # 5 granted, 2 back, 1 more to w3


def test_a_cancelled_wait_does_not_keep_a_slot() -> None:
    async def scenario() -> RunLimits:
        limits = RunLimits(1)
        held = await _one(limits, "a")
        waiting = asyncio.create_task(_one(limits, "a"))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        limits.done(held, None)
        limits.done(await asyncio.wait_for(_one(limits, "a"), timeout=5), "ok")
        return limits

    assert asyncio.run(scenario()).stats()["endpoints"]["a"]["in_flight"] == 0


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        RunLimits(0)
    with pytest.raises(ValueError, match="rate_per_s"):
        RunLimits(4, rate_per_s=0.0)


def test_one_host_keeps_each_runs_limits_apart_until_closed() -> None:
    """``LimitsHost`` (the driver's one actor): two runs on the same endpoint name have
    their own ceilings; a closed run's limits are gone (its late callers get an error, its
    final counters are returned) while the other run goes on."""

    async def scenario() -> tuple[dict[str, object], LimitsHost]:
        host = LimitsHost()
        host.open("run-a", 1)
        host.open("run-b", 2)
        (a,) = await host.acquire("run-a", "e", "w", 5)
        b = await host.acquire("run-b", "e", "w", 5)
        assert len(b) == 2  # run-b's ceiling, not run-a's single slot in use
        blocked = asyncio.ensure_future(host.acquire("run-a", "e", "w"))
        await asyncio.sleep(0.05)
        assert not blocked.done()  # run-a is at its ceiling of 1
        host.report("run-a", "e", "w", [(a, "ok", None)], [a])
        assert len(await asyncio.wait_for(blocked, timeout=5)) == 1
        closed = host.close("run-a")
        with pytest.raises(LookupError, match="has no limits here"):
            await host.acquire("run-a", "e", "w")
        host.report("run-b", "e", "w", [(slot, "ok", None) for slot in b], b)
        return closed, host

    closed, host = asyncio.run(scenario())
    assert closed["granted"] == 2
    assert host.runs() == ["run-b"]
    assert host.stats("run-b")["endpoints"]["e"]["in_flight"] == 0
    assert host.close("run-b")["granted"] == 2 and host.runs() == []
