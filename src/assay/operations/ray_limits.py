"""One limit for the whole scaled-out run: a Ray actor holding every endpoint's concurrency
and request-rate budget, and the proxy through which each worker's model calls take a slot.

Why an actor: per-process limiters do not add up. Two workers with a limit of 16 each put
32 calls in flight, and when the endpoint answers 429 only the worker that got it slows
down. Here every call of every worker asks the one ``RunLimits`` actor (an async actor:
waiting calls cost a coroutine there, not a thread) for a slot and tells it how the call
went, so

- the calls in flight to an endpoint never exceed ``max_in_flight`` across all workers;
- the limit adapts as one limit: it is the runner's own ``AdaptiveLimiter`` (AIMD on the
  throttles of the whole run), kept inside the actor;
- a 429/503 with Retry-After pauses every worker's next calls to that endpoint together
  until the time the server named (capped by ``max_pause_s``), not only the one that got it;
- ``rate_per_s`` spaces the grants of a slot at least ``1 / rate_per_s`` apart (a request
  budget per second), across workers.

A worker that dies holding slots cannot give them back: a slot held longer than
``slot_lease_s`` (default 300 s, above the 120 s a call may last with its retries) is
taken back, so a killed worker shrinks the run's limit for a few minutes at most.

Cost: two actor messages per model call (the slot, then the outcome without waiting for an
answer), about a millisecond on one host; ``docs/scale-out.md`` has the figures.

This module does not import Ray: ``RunLimits`` becomes an actor in
``assay.operations.ray_backend`` (``ray.remote(RunLimits)``), and ``RemoteLimiter`` only
calls the actor handle it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from assay.models.reliability import AdaptiveLimiter, EndpointLimiter

MAX_PAUSE_S = 60.0
"""The longest run-wide pause one Retry-After can impose (the retry policy's cap too)."""

SLOT_LEASE_S = 300.0
"""A slot held longer than this is taken back (its worker died)."""


@dataclass
class _Endpoint:
    limiter: AdaptiveLimiter
    paused_until: float = 0.0
    next_grant: float = 0.0
    slots: dict[int, tuple[int, float]] = field(default_factory=dict)  # slot: (epoch, granted)


class RunLimits:
    """The actor's body: per endpoint an ``AdaptiveLimiter`` whose ceiling is
    ``max_in_flight``, a pause (Retry-After) and a grant spacing (``rate_per_s``)."""

    def __init__(
        self,
        max_in_flight: int,
        rate_per_s: float | None = None,
        *,
        max_pause_s: float = MAX_PAUSE_S,
        slot_lease_s: float = SLOT_LEASE_S,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if rate_per_s is not None and rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self.max_in_flight = max_in_flight
        self.rate_per_s = rate_per_s
        self.max_pause_s = max_pause_s
        self.slot_lease_s = slot_lease_s
        self._endpoints: dict[str, _Endpoint] = {}
        self._ids = itertools.count(1)
        self._by_slot: dict[int, str] = {}
        self._swept = time.monotonic()
        self.pauses = 0
        self.reclaimed = 0
        self.granted = 0

    def _endpoint(self, name: str) -> _Endpoint:
        found = self._endpoints.get(name)
        if found is None:
            limiter = AdaptiveLimiter(self.max_in_flight, maximum=self.max_in_flight)
            found = self._endpoints[name] = _Endpoint(limiter=limiter)
        return found

    async def acquire(self, endpoint: str) -> int:
        """Wait for a slot of ``endpoint``, then for its pause and its rate spacing;
        returns the slot's id (for ``done``)."""
        state = self._endpoint(endpoint)
        self._sweep()
        epoch = await state.limiter.acquire()
        try:
            while True:
                now = time.monotonic()
                wait = state.paused_until - now
                if self.rate_per_s is not None:
                    wait = max(wait, state.next_grant - now)
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            if self.rate_per_s is not None:
                state.next_grant = time.monotonic() + 1.0 / self.rate_per_s
        except BaseException:
            state.limiter.release()
            raise
        slot = next(self._ids)
        state.slots[slot] = (epoch, time.monotonic())
        self._by_slot[slot] = endpoint
        self.granted += 1
        return slot

    def done(self, slot: int, outcome: str | None, retry_after_s: float | None = None) -> None:
        """Give slot ``slot`` back with how its call went: ``ok``, ``throttle`` (pausing
        the endpoint for ``retry_after_s``, when given) or ``None`` (another failure)."""
        endpoint = self._by_slot.pop(slot, None)
        if endpoint is None:
            return  # taken back already (its lease lapsed) or never granted
        state = self._endpoints[endpoint]
        epoch, _ = state.slots.pop(slot)
        if outcome == "ok":
            state.limiter.on_success(epoch)
        elif outcome == "throttle":
            state.limiter.on_throttle(epoch)
            if retry_after_s is not None and retry_after_s > 0:
                until = time.monotonic() + min(retry_after_s, self.max_pause_s)
                if until > state.paused_until:
                    state.paused_until = until
                    self.pauses += 1
        state.limiter.release()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 1.0:
            return
        self._swept = now
        for state in self._endpoints.values():
            stale = [
                s for s, (_, granted) in state.slots.items() if now - granted > self.slot_lease_s
            ]
            for slot in stale:
                del state.slots[slot]
                self._by_slot.pop(slot, None)
                state.limiter.release()
                self.reclaimed += 1

    def stats(self) -> dict[str, Any]:
        """Counters for tests and benchmarks: per endpoint the limit, peak in flight,
        throttles; overall grants, pauses, slots taken back."""
        return {
            "granted": self.granted,
            "pauses": self.pauses,
            "reclaimed": self.reclaimed,
            "endpoints": {
                name: {
                    "limit": state.limiter.limit,
                    "in_flight": state.limiter.in_flight,
                    "peak_in_flight": state.limiter.peak_in_flight,
                    "throttles": state.limiter.throttles,
                    "decreases": state.limiter.decreases,
                }
                for name, state in self._endpoints.items()
            },
        }


class RemoteLimiter:
    """A worker's ``EndpointLimiter`` for one endpoint: slots from the ``RunLimits`` actor.

    The outcome (``on_success``/``on_throttle``) is kept until the slot closes and sent with
    the release in one message that is not waited for."""

    def __init__(self, actor: Any, endpoint: str) -> None:
        self._actor = actor
        self._endpoint = endpoint
        self._outcomes: dict[int, tuple[str, float | None]] = {}

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        ref = self._actor.acquire.remote(self._endpoint)
        try:
            slot: int = await ref
        except asyncio.CancelledError:
            # the actor may grant the slot anyway: give it back when it does
            ref.future().add_done_callback(self._give_back)
            raise
        try:
            yield slot
        finally:
            outcome, retry_after = self._outcomes.pop(slot, (None, None))
            self._actor.done.remote(slot, outcome, retry_after)

    def _give_back(self, future: Any) -> None:
        with contextlib.suppress(Exception):
            if not future.cancelled() and future.exception() is None:
                self._actor.done.remote(future.result(), None, None)

    def start_at(self, concurrency: int) -> None:
        """The run-wide limit starts at its ceiling: nothing to raise per call."""
        del concurrency

    def on_success(self, ticket: int) -> None:
        self._outcomes[ticket] = ("ok", None)

    def on_throttle(self, ticket: int, retry_after_s: float | None = None) -> None:
        self._outcomes[ticket] = ("throttle", retry_after_s)


def remote_limits(actor: Any) -> Callable[[str], EndpointLimiter]:
    """The ``SHARED_LIMITS`` function of a worker: one ``RemoteLimiter`` per endpoint."""
    proxies: dict[str, RemoteLimiter] = {}

    def limiter(endpoint: str) -> EndpointLimiter:
        found = proxies.get(endpoint)
        if found is None:
            found = proxies[endpoint] = RemoteLimiter(actor, endpoint)
        return found

    return limiter
