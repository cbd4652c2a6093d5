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

Why slots are leased in bunches: an actor message costs a few hundred microseconds of
CPU on each side, so one message per call caps the run at what one actor process can
answer (measured in ``benchmarks/scale_out.py``). A worker's ``RemoteLimits`` asks for as
many slots as it has calls waiting, keeps the slots its calls give back for its next
calls, and every ``report_s`` (50 ms) sends the outcomes it collected and returns the slots
no call of it is waiting for, in one message. Its answer carries the limit's epoch (slots
granted before the limit was lowered are returned, not reused) and the endpoints' pauses,
so a Retry-After one worker got holds the others back within one report, and whether
other workers wait at the actor: then each slot goes back as its call ends instead of
being kept (no worker hoards a tight limit). A throttle is reported at once.

A worker that dies holding slots cannot give them back: a holder that has not reported
for ``slot_lease_s`` (default 300 s) loses its slots, so a killed worker shrinks the
run's limit for a few minutes at most.

This module does not import Ray: ``LimitsHost`` (each run's ``RunLimits``, by run id)
becomes an actor in ``assay.operations.ray_backend``, one per driver kept for its later
runs, and ``RemoteLimiter`` only calls the handle it is given (``HostedLimits``: one run's
limits in the host; a ``RunLimits`` actor's own handle works the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Sequence
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
    slots: dict[int, tuple[int, str]] = field(default_factory=dict)  # slot: (epoch, holder)


class RunLimits:
    """The actor's body: per endpoint an ``AdaptiveLimiter`` whose ceiling is
    ``max_in_flight``, a pause (Retry-After) and a grant spacing (``rate_per_s``); slots
    granted to holders (the workers' ``RemoteLimits``), who report outcomes in batches."""

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
        self._seen: dict[str, float] = {}  # holder: last heard from
        self._swept = time.monotonic()
        self.pauses = 0
        self.reclaimed = 0
        self.granted = 0
        self.messages = 0

    def _endpoint(self, name: str) -> _Endpoint:
        found = self._endpoints.get(name)
        if found is None:
            limiter = AdaptiveLimiter(self.max_in_flight, maximum=self.max_in_flight)
            found = self._endpoints[name] = _Endpoint(limiter=limiter)
        return found

    async def acquire(self, endpoint: str, holder: str = "", want: int = 1) -> list[int]:
        """Wait for one slot of ``endpoint`` (then for its pause and rate spacing), and take
        up to ``want - 1`` more that are free right now (none under a request rate);
        returns the slots' ids."""
        self.messages += 1
        self._seen[holder] = time.monotonic()
        state = self._endpoint(endpoint)
        self._sweep()
        limiter = state.limiter
        epoch = await limiter.acquire()
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
            limiter.release()
            raise
        epochs = [epoch]
        if self.rate_per_s is None:
            while len(epochs) < want and limiter.in_flight < limiter.limit and not limiter.waiting:
                epochs.append(await limiter.acquire())  # free: returns without waiting
        slots = []
        for granted_epoch in epochs:
            slot = next(self._ids)
            state.slots[slot] = (granted_epoch, holder)
            slots.append(slot)
        self.granted += len(slots)
        return slots

    def report(
        self,
        endpoint: str,
        holder: str = "",
        outcomes: Sequence[tuple[int, str | None, float | None]] = (),
        returned: Sequence[int] = (),
    ) -> tuple[int, float, bool]:
        """Calls that finished on slots of ``endpoint`` (slot, ``ok``/``throttle``/
        ``None``, Retry-After seconds), and slots given back; returns the limit's epoch,
        the seconds the endpoint stays paused, and whether other holders wait for a slot
        (then a holder gives each slot back when its call ends instead of keeping it)."""
        self.messages += 1
        self._seen[holder] = time.monotonic()
        state = self._endpoint(endpoint)
        limiter = state.limiter
        for slot, outcome, retry_after_s in outcomes:
            epoch = state.slots.get(slot, (limiter.epoch, holder))[0]
            if outcome == "ok":
                limiter.on_success(epoch)
            elif outcome == "throttle":
                limiter.on_throttle(epoch)
                if retry_after_s is not None and retry_after_s > 0:
                    until = time.monotonic() + min(retry_after_s, self.max_pause_s)
                    if until > state.paused_until:
                        state.paused_until = until
                        self.pauses += 1
        contended = limiter.waiting > 0  # before the slots given back go to the waiters
        for slot in returned:
            if state.slots.pop(slot, None) is not None:
                limiter.release()
        pause_s = max(0.0, state.paused_until - time.monotonic())
        return limiter.epoch, pause_s, contended

    def done(self, slot: int, outcome: str | None, retry_after_s: float | None = None) -> None:
        """One call's outcome and its slot back (``report`` for a single slot)."""
        for name, state in self._endpoints.items():
            if slot in state.slots:
                self.report(name, state.slots[slot][1], [(slot, outcome, retry_after_s)], [slot])
                return

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 1.0:
            return
        self._swept = now
        gone = {holder for holder, seen in self._seen.items() if seen < now - self.slot_lease_s}
        if not gone:
            return
        for state in self._endpoints.values():
            stale = [slot for slot, (_, holder) in state.slots.items() if holder in gone]
            for slot in stale:
                del state.slots[slot]
                state.limiter.release()
                self.reclaimed += 1
        for holder in gone:
            del self._seen[holder]

    def stats(self) -> dict[str, Any]:
        """Counters for tests and benchmarks: per endpoint the limit, slots held, peak held,
        throttles; overall grants, pauses, slots taken back, messages answered."""
        return {
            "granted": self.granted,
            "pauses": self.pauses,
            "reclaimed": self.reclaimed,
            "messages": self.messages,
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


class LimitsHost:
    """The actor's body: the ``RunLimits`` of every run a driver has going, by run id.

    Why one host for many runs, not one actor per run: an actor is a new process, ~2 s to
    start on the 2-core test machine, a quarter of a 1,280-item judge run's bound at 32 in
    flight. The driver starts one host with its first Ray run (while the workers load the
    run's code) and keeps it for the runs after it; each run's limits live from ``open``
    to ``close``, and a worker still calling for a closed run gets an error (its limiter
    then fails its waiting calls, as when the actor is gone)."""

    def __init__(self) -> None:
        self._runs: dict[str, RunLimits] = {}

    def open(self, run: str, max_in_flight: int, rate_per_s: float | None = None) -> None:
        """Start ``run``'s limits (a run resumed again starts afresh)."""
        self._runs[run] = RunLimits(max_in_flight, rate_per_s)

    def close(self, run: str) -> dict[str, Any]:
        """End ``run``'s limits; returns their final ``stats``."""
        limits = self._runs.pop(run, None)
        return limits.stats() if limits is not None else {}

    def _limits(self, run: str) -> RunLimits:
        found = self._runs.get(run)
        if found is None:
            raise LookupError(f"run {run[:8]} has no limits here (it ended)")
        return found

    async def acquire(self, run: str, endpoint: str, holder: str = "", want: int = 1) -> list[int]:
        return await self._limits(run).acquire(endpoint, holder, want)

    def report(
        self,
        run: str,
        endpoint: str,
        holder: str = "",
        outcomes: Sequence[tuple[int, str | None, float | None]] = (),
        returned: Sequence[int] = (),
    ) -> tuple[int, float, bool]:
        return self._limits(run).report(endpoint, holder, outcomes, returned)

    def stats(self, run: str) -> dict[str, Any]:
        return self._limits(run).stats()

    def runs(self) -> list[str]:
        """The runs whose limits are open (tests: none is left behind)."""
        return list(self._runs)


@dataclass(frozen=True)
class _RunMethod:
    host: Any
    name: str
    run: str

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.host, self.name).remote(self.run, *args, **kwargs)


@dataclass(frozen=True)
class HostedLimits:
    """One run's limits inside a ``LimitsHost`` actor, called like the handle of a
    ``RunLimits`` actor (``limits.acquire.remote(...)``), so ``RemoteLimiter`` takes
    either; it travels to the workers as a task argument (an actor handle and a run id)."""

    host: Any
    run: str

    @property
    def acquire(self) -> _RunMethod:
        return _RunMethod(self.host, "acquire", self.run)

    @property
    def report(self) -> _RunMethod:
        return _RunMethod(self.host, "report", self.run)

    @property
    def stats(self) -> _RunMethod:
        return _RunMethod(self.host, "stats", self.run)


class RemoteLimiter:
    """A worker's ``EndpointLimiter`` for one endpoint: slots leased from the ``RunLimits``
    actor in bunches, reused by this worker's calls, outcomes reported in batches."""

    def __init__(
        self, actor: Any, endpoint: str, holder: str = "", *, report_s: float = 0.05
    ) -> None:
        self._actor = actor
        self._endpoint = endpoint
        self._holder = holder
        self._report_s = report_s
        self._free: list[int] = []
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._epoch_of: dict[int, int] = {}  # slot: the limit's epoch when granted
        self._epoch = 0
        self._outcomes: dict[int, tuple[str, float | None]] = {}
        self._finished: list[tuple[int, str | None, float | None]] = []
        self._stale: list[int] = []
        self._paused_until = 0.0
        self._contended = False
        self._fetcher: asyncio.Task[None] | None = None
        self._reporter: asyncio.Task[None] | None = None
        self._urgent = asyncio.Event()
        self._last_report = time.monotonic()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        self._start_reporting()
        slot = await self._take()
        try:
            # a pause (Retry-After) learnt while this call waited holds it back too
            while (pause := self._paused_until - time.monotonic()) > 0:
                await asyncio.sleep(pause)
            yield slot
        finally:
            outcome, retry_after = self._outcomes.pop(slot, (None, None))
            self._finished.append((slot, outcome, retry_after))
            self._give(slot)

    async def _take(self) -> int:
        if self._free and not self._waiters:
            return self._free.pop()
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        if self._fetcher is None or self._fetcher.done():
            self._fetcher = asyncio.ensure_future(self._fetch())
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._give(waiter.result())  # granted just as we were cancelled
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    async def _fetch(self) -> None:
        """Ask the actor for as many slots as calls wait here, until none waits."""
        try:
            while self._waiters:
                want = len(self._waiters)
                slots: list[int] = await self._actor.acquire.remote(
                    self._endpoint, self._holder, want
                )
                for slot in slots:
                    self._epoch_of[slot] = self._epoch
                    self._give(slot)
        except Exception as exc:  # the actor is gone (the run ended): fail the waiters
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_exception(RuntimeError(f"the run's limiter is gone: {exc}"))

    def _give(self, slot: int) -> None:
        """A slot back from a call (or from the actor): to the next waiting call, else
        kept free; a slot granted before the limit was lowered goes back to the actor."""
        if self._contended or self._epoch_of.get(slot, self._epoch) < self._epoch:
            self._epoch_of.pop(slot, None)
            self._stale.append(slot)
            self._urgent.set()
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(slot)
                return
        self._free.append(slot)

    def _start_reporting(self) -> None:
        if self._reporter is None or self._reporter.done():
            self._reporter = asyncio.ensure_future(self._report_loop())

    async def _report_loop(self) -> None:
        """Every ``report_s`` (at once after a throttle or a give-back under contention):
        outcomes and unneeded slots to the actor; its epoch, pause and contention back.
        With nothing to say it still reports every 30 s: the actor's sign of life."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._urgent.wait(), self._report_s)
            self._urgent.clear()
            idle = not (self._finished or self._stale or (self._free and not self._waiters))
            if idle and time.monotonic() - self._last_report < 30.0:
                continue
            self._last_report = time.monotonic()
            try:
                epoch, pause_s, contended = await self._actor.report.remote(*self._report_args())
            except Exception:  # the actor is gone: the run is over
                return
            if pause_s > 0:
                self._paused_until = max(self._paused_until, time.monotonic() + pause_s)
            self._epoch = max(self._epoch, epoch)
            self._contended = contended

    def _report_args(
        self,
    ) -> tuple[str, str, list[tuple[int, str | None, float | None]], list[int]]:
        outcomes, self._finished = self._finished, []
        returned, self._stale = self._stale, []
        if not self._waiters:  # nobody here needs them: back to the other workers
            returned += self._free
            self._free = []
        for slot in returned:
            self._epoch_of.pop(slot, None)
        return self._endpoint, self._holder, outcomes, returned

    def close(self) -> None:
        """Report what is left and give every free slot back (the worker is done); the
        message is sent, not waited for."""
        for task in (self._reporter, self._fetcher):
            if task is not None:
                task.cancel()
        endpoint, holder, outcomes, returned = self._report_args()
        if outcomes or returned:
            with contextlib.suppress(Exception):
                self._actor.report.remote(endpoint, holder, outcomes, returned)

    def start_at(self, concurrency: int) -> None:
        """The run-wide limit starts at its ceiling: nothing to raise per call."""
        del concurrency

    def on_success(self, ticket: int) -> None:
        self._outcomes[ticket] = ("ok", None)

    def on_throttle(self, ticket: int, retry_after_s: float | None = None) -> None:
        self._outcomes[ticket] = ("throttle", retry_after_s)
        if retry_after_s is not None and retry_after_s > 0:  # this worker holds back at once
            until = time.monotonic() + min(retry_after_s, MAX_PAUSE_S)
            self._paused_until = max(self._paused_until, until)
        self._urgent.set()  # and the others learn it at their next report


class RemoteLimits:
    """A worker's ``SHARED_LIMITS`` function: one ``RemoteLimiter`` per endpoint; ``close``
    when the worker is done gives its slots back."""

    def __init__(self, actor: Any, holder: str = "") -> None:
        self._actor = actor
        self._holder = holder or f"{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._proxies: dict[str, RemoteLimiter] = {}

    def __call__(self, endpoint: str) -> EndpointLimiter:
        found = self._proxies.get(endpoint)
        if found is None:
            found = self._proxies[endpoint] = RemoteLimiter(self._actor, endpoint, self._holder)
        return found

    def close(self) -> None:
        for proxy in self._proxies.values():
            proxy.close()


def remote_limits(actor: Any) -> RemoteLimits:
    """The ``SHARED_LIMITS`` function of a worker (see ``RemoteLimits``)."""
    return RemoteLimits(actor)
