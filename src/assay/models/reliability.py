"""Reliability for model calls: an adaptive per-endpoint concurrency limit, bounded retries.

Why: rate limits and timeouts are the commonest way evaluation runs lose samples, and
unbounded retries are the commonest way they hang (see the field lessons). So every call
through ``ReliableModel``

- waits for a slot of its endpoint's ``AdaptiveLimiter``. The limit adapts AIMD-style:
  it halves when throttles (HTTP 429/503) exceed 20% of a window of about ``limit``
  answers, and grows by one per clean window, like TCP congestion avoidance; until the
  first decrease it doubles per window (slow start), so a healthy endpoint reaches the run's
  concurrency within a few round trips. Only throttles of requests sent *after* the last
  decrease count, so one overload halves the limit once, not to the floor; the tolerance
  keeps sporadic 429s from collapsing throughput (``tolerance=0`` gives textbook AIMD);
- retries retryable failures (429, 5xx, 408/409/425, connection errors, timeouts) with
  capped exponential backoff and full jitter (``uniform(0, min(cap, base * 2**n))``),
  honouring the server's Retry-After as a minimum wait (capped by ``max_retry_after_s``);
- is bounded in attempts *and* total seconds: when the next wait would end past the total
  budget the call fails at once instead of sleeping uselessly;
- runs under a per-call timeout (``asyncio.timeout``), never longer than the budget left.

Where the limit starts: at the concurrency of the run making the calls. The runner sets
``RUN_CONCURRENCY`` (a context variable) for its workers, and a call raises its endpoint's
limit to that many slots (up to the ceiling) unless the endpoint has throttled already
(then the limit it backed off to stands). Starting lower and slow-starting up would cost the
first round trips of every run: at 200 items a third of the run's throughput. Outside a run
the limit starts at 16 concurrent calls per endpoint (Ragas' default).

Defaults (``RetryPolicy`` and ``AdaptiveLimiter``), chosen for LLM judges: floor 1, ceiling
64, halving factor 0.5, tolerance 0.2 over windows of at least 8 answers; 6 attempts;
120 s total per call including waits (the clock starts when the call first gets a slot, so
time queued behind other items of a big run does not count); 60 s per attempt (judge
answers are short; ``ModelSettings.timeout_s`` overrides it per call); backoff base 0.5 s,
cap 20 s; Retry-After honoured up to 60 s. A call that still fails raises ``ModelError``
(the judge step then records ``status="error"``; the run goes on).

Shared limits (``EndpointLimiter``): a run spread over many processes (the Ray backend)
needs one limit for the whole run, not one per process. ``SHARED_LIMITS`` (a context
variable) names a function endpoint -> limiter; while it is set, every ``ReliableModel``
call takes its slot there instead of from its process's ``AdaptiveLimiter``. The limiter
only has to speak the small ``EndpointLimiter`` protocol below; ``on_throttle`` gets the
server's Retry-After, so a shared limiter can hold every caller back together.

Counters: ``ReliableModel.stats`` (calls, attempts, retries, throttles, timeouts, failures)
and each limiter's ``throttles``/``decreases``/``increases``/``limit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import math
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    Model,
    ModelError,
    ModelResponse,
    ModelSettings,
    ModelTimeoutError,
    unsupported,
)
from assay.models.wrapper import PassThrough

_T = TypeVar("_T")

RUN_CONCURRENCY: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "assay_run_concurrency", default=None
)
"""The concurrency of the run the current task belongs to (set by the runner): where the
limiter of an endpoint a run calls starts."""


class EndpointLimiter(Protocol):
    """What a call needs from its endpoint's limit: a slot (``slot()`` yields the ticket that
    identifies it) and a word on how it went. ``AdaptiveLimiter`` is the in-process one;
    the Ray backend's run-wide limiter (``assay.operations.ray_limits``) is another."""

    def slot(self) -> contextlib.AbstractAsyncContextManager[int]: ...

    def start_at(self, concurrency: int) -> None: ...

    def on_success(self, ticket: int) -> None: ...

    def on_throttle(self, ticket: int, retry_after_s: float | None = None) -> None: ...


SHARED_LIMITS: contextvars.ContextVar[Callable[[str], EndpointLimiter] | None] = (
    contextvars.ContextVar("assay_shared_limits", default=None)
)
"""Endpoint -> limiter for every call made in this context (a Ray worker sets it to the
run's shared limiter); ``None``: each process's own ``AdaptiveLimiter``."""

_RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
_THROTTLE_STATUSES = frozenset({429, 503, 529})


def retryable_status(status: int) -> bool:
    """Worth another attempt: request timeout, conflict, too early, 429, any 5xx."""
    return status in _RETRYABLE_STATUSES or status >= 500


def is_throttle_status(status: int) -> bool:
    """The endpoint says it is overloaded: 429, 503, and Anthropic's 529."""
    return status in _THROTTLE_STATUSES


def parse_retry_after(headers: Mapping[str, str] | Any) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or HTTP date)."""
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            value = float(millis) / 1000
            return value if math.isfinite(value) and value >= 0 else None
        raw = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if raw is None:
        return None
    raw = str(raw).strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return value if math.isfinite(value) and value >= 0 else None


# ---------------------------------------------------------------------- limiter
class AdaptiveLimiter:
    """An AIMD concurrency limit shared by every call to one endpoint.

    ``acquire``/``release`` (or ``async with limiter.slot() as ticket``) bound the calls in
    flight by ``limit``; ``on_success(ticket)``/``on_throttle(ticket)`` report outcomes.
    Outcomes are judged per window of ``max(limit, min_window)`` answers: as soon as more
    than ``tolerance`` of a window is throttled, the limit is multiplied by
    ``decrease_factor`` (and answers to requests sent before that decrease no longer count:
    they describe the old limit); a window that closes within tolerance grows the limit by
    one (by the window's successes during slow start, i.e. doubling, until the first
    decrease). ``tolerance=0`` is textbook AIMD: any throttle halves the limit. The default
    0.2 keeps a few sporadic 429s (a provider's noise, or another client's burst) from
    collapsing throughput, while a real overload — where most answers are 429 — still
    halves the limit within a fraction of a round trip. Waiters are served in FIFO order.
    Not thread-safe: use it from one event loop at a time.
    """

    def __init__(
        self,
        initial: int = 16,
        *,
        minimum: int = 1,
        maximum: int = 64,
        decrease_factor: float = 0.5,
        tolerance: float = 0.2,
        min_window: int = 8,
    ) -> None:
        if not 1 <= minimum <= initial <= maximum:
            raise ValueError(
                f"need 1 <= minimum <= initial <= maximum, got {minimum}, {initial}, {maximum}"
            )
        if not 0.0 < decrease_factor < 1.0:
            raise ValueError("decrease_factor must be between 0 and 1")
        if not 0.0 <= tolerance < 1.0 or min_window < 1:
            raise ValueError("tolerance must be in [0, 1) and min_window at least 1")
        self.minimum = minimum
        self.maximum = maximum
        self.decrease_factor = decrease_factor
        self.tolerance = tolerance
        self.min_window = min_window
        self._limit = float(initial)
        self._in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._epoch = 0
        self._slow_start = True
        self._window_ok = 0
        self._window_throttled = 0
        self.throttles = 0
        self.decreases = 0
        self.increases = 0
        self.peak_in_flight = 0

    @property
    def limit(self) -> int:
        """Calls allowed in flight now."""
        return max(self.minimum, min(self.maximum, int(self._limit)))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Calls queued for a slot."""
        return len(self._waiters)

    @property
    def epoch(self) -> int:
        """How many times the limit was lowered: the ticket of a slot granted now."""
        return self._epoch

    async def acquire(self) -> int:
        """Wait for a slot; returns the ticket (the limit's epoch when the slot was granted)."""
        if not self._waiters and self._in_flight < self.limit:
            self._take()
            return self._epoch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as we were cancelled: pass the slot on
            else:
                with suppress(ValueError):
                    self._waiters.remove(waiter)
            raise
        return self._epoch

    def release(self) -> None:
        self._in_flight = max(0, self._in_flight - 1)
        self._wake()

    def start_at(self, concurrency: int) -> None:
        """Raise the limit to ``concurrency`` (at most ``maximum``) unless the endpoint has
        throttled since this limiter was made: then the limit it backed off to stands.
        Never lowers the limit. Called with the run's concurrency on each call (cheap)."""
        if self.decreases or concurrency <= self._limit:
            return
        self._limit = float(min(self.maximum, concurrency))
        self._wake()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        ticket = await self.acquire()
        try:
            yield ticket
        finally:
            self.release()

    def on_success(self, ticket: int) -> None:
        """A call admitted with ``ticket`` succeeded."""
        del ticket
        self._window_ok += 1
        self._settle()

    def on_throttle(self, ticket: int, retry_after_s: float | None = None) -> None:
        """A call admitted with ``ticket`` was throttled (HTTP 429/503). ``retry_after_s``
        is not used here: in one process the throttled call itself waits it out."""
        del retry_after_s
        self.throttles += 1
        if ticket < self._epoch:
            return  # sent before the last decrease: the overload was already answered
        self._window_throttled += 1
        self._settle()

    def _settle(self) -> None:
        window = max(self.limit, self.min_window)
        if self._window_throttled > self.tolerance * window:
            self._limit = max(float(self.minimum), math.floor(self._limit * self.decrease_factor))
            self._epoch += 1
            self.decreases += 1
            self._slow_start = False
            self._window_ok = self._window_throttled = 0
        elif self._window_ok + self._window_throttled >= window:
            step = float(self._window_ok) if self._slow_start else 1.0
            if self._limit < self.maximum:
                self.increases += 1
            self._limit = min(float(self.maximum), self._limit + step)
            self._window_ok = self._window_throttled = 0
        self._wake()

    def _take(self) -> None:
        self._in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self._in_flight)

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if waiter.done():
                continue
            try:
                waiter.set_result(None)
            except RuntimeError:  # its event loop is closed: the waiter is gone
                continue
            self._take()


_LIMITERS: dict[str, AdaptiveLimiter] = {}


def limiter_for(endpoint: str, **defaults: Any) -> AdaptiveLimiter:
    """The process-wide limiter of ``endpoint`` (created with ``defaults`` on first use)."""
    limiter = _LIMITERS.get(endpoint)
    if limiter is None:
        limiter = _LIMITERS[endpoint] = AdaptiveLimiter(**defaults)
    return limiter


def reset_limiters() -> None:
    """Forget all per-endpoint limiters (tests)."""
    _LIMITERS.clear()


def endpoint_of(model: Model) -> str:
    """The key of a model's endpoint: its base URL, else ``provider/model``."""
    base_url = getattr(model, "base_url", None)
    if isinstance(base_url, str) and base_url:
        return base_url
    return f"{model.provider or 'model'}/{model.model_id}"


# ---------------------------------------------------------------------- retries
@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounds of one call: attempts, total seconds, seconds per attempt, backoff shape."""

    max_attempts: int = 6
    total_timeout_s: float = 120.0
    call_timeout_s: float = 60.0
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.total_timeout_s <= 0 or self.call_timeout_s <= 0:
            raise ValueError("timeouts must be positive")

    def backoff(self, retry_index: int, rng: random.Random) -> float:
        """Full jitter: uniform in ``[0, min(max_delay, base * 2**retry_index)]``."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0 ** min(retry_index, 30)))
        return rng.uniform(0.0, ceiling)


@dataclass
class ReliabilityStats:
    """Counters of a ``ReliableModel``."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    throttles: int = 0
    timeouts: int = 0
    failures: int = 0
    retry_wait_s: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "retry_wait_s": round(self.retry_wait_s, 3)}


@dataclass
class ReliableModel(PassThrough):
    """Wraps a ``Model`` with the endpoint's adaptive limiter, retries and timeouts.

    ``limiter`` defaults to the shared limiter of the inner model's endpoint (base URL),
    so every model object talking to one server shares one limit; inside a run it starts at
    the run's concurrency (``RUN_CONCURRENCY``). Under ``SHARED_LIMITS`` (a worker of a
    scaled-out run) the shared limiter is used instead. Its identity is the inner model's
    (``PassThrough``).
    """

    inner: Model
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    limiter: EndpointLimiter | None = None
    rng: random.Random = field(default_factory=random.Random)
    stats: ReliabilityStats = field(default_factory=ReliabilityStats)

    def __post_init__(self) -> None:
        if self.limiter is None:
            self.limiter = limiter_for(endpoint_of(self.inner))

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        async def call() -> ModelResponse:
            return await self.inner.generate(messages, schema=schema, settings=settings)

        response, attempts = await self._reliably(call, settings)
        if response.attempts == attempts:  # the usual single attempt: no copy per call
            return response
        return response.model_copy(update={"attempts": attempts})

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        """The inner model's ``loglikelihood`` under the same limiter, retries and timeouts."""
        method = getattr(self.inner, "loglikelihood", None)
        if method is None:
            raise unsupported(self.inner, "loglikelihood")

        async def call() -> list[Loglikelihood]:
            result: list[Loglikelihood] = await method(list(requests), settings=settings)
            return result

        results, _ = await self._reliably(call, settings)
        return results

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        """The inner model's ``loglikelihood_rolling`` with retries and timeouts."""
        method = getattr(self.inner, "loglikelihood_rolling", None)
        if method is None:
            raise unsupported(self.inner, "loglikelihood_rolling")

        async def call() -> float:
            return float(await method(text, settings=settings))

        value, _ = await self._reliably(call, settings)
        return value

    async def _reliably(
        self, call: Callable[[], Awaitable[_T]], settings: ModelSettings | None
    ) -> tuple[_T, int]:
        """``call()`` in a slot of the endpoint's limiter, retried per ``policy``; returns
        its result and the attempts it took."""
        shared = SHARED_LIMITS.get()
        limiter = shared(endpoint_of(self.inner)) if shared is not None else self.limiter
        assert limiter is not None
        wanted = RUN_CONCURRENCY.get()
        if wanted is not None:
            limiter.start_at(wanted)
        policy = self.policy
        self.stats.calls += 1
        per_call = settings.timeout_s if settings and settings.timeout_s else policy.call_timeout_s
        started: float | None = None
        last: ModelError | None = None
        attempt = 0
        while attempt < policy.max_attempts:
            async with limiter.slot() as ticket:
                now = time.monotonic()
                if started is None:
                    started = now
                remaining = started + policy.total_timeout_s - now
                if remaining <= 0:
                    break
                attempt += 1
                timeout = min(per_call, remaining)
                self.stats.attempts += 1
                try:
                    async with asyncio.timeout(timeout):
                        response = await call()
                except TimeoutError:
                    self.stats.timeouts += 1
                    last = ModelTimeoutError(
                        f"{self._label()}: no answer within {timeout:.1f}s (attempt {attempt})"
                    )
                except ModelError as exc:
                    last = exc
                    if exc.throttled:
                        self.stats.throttles += 1
                        limiter.on_throttle(ticket, exc.retry_after_s)
                else:
                    limiter.on_success(ticket)
                    return response, attempt
            assert last is not None and started is not None
            if not last.retryable or attempt >= policy.max_attempts:
                break
            delay = policy.backoff(attempt - 1, self.rng)
            if last.retry_after_s is not None:
                delay = max(delay, min(last.retry_after_s, policy.max_retry_after_s))
            if time.monotonic() + delay >= started + policy.total_timeout_s:
                break
            self.stats.retries += 1
            self.stats.retry_wait_s += delay
            await asyncio.sleep(delay)
        self.stats.failures += 1
        if last is None:
            raise ModelTimeoutError(f"{self._label()}: no attempt could start in time")
        if not last.retryable:
            raise last
        elapsed = time.monotonic() - (started or time.monotonic())
        message = (
            f"{self._label()}: gave up after {attempt} attempt(s) in {elapsed:.1f}s "
            f"(limits: {policy.max_attempts} attempts, {policy.total_timeout_s:g}s): {last}"
        )
        if isinstance(last, ModelTimeoutError):
            raise ModelTimeoutError(message) from last
        raise ModelError(
            message,
            status_code=last.status_code,
            throttled=last.throttled,
            retry_after_s=last.retry_after_s,
        ) from last

    def _label(self) -> str:
        provider = self.inner.provider
        return f"{provider}/{self.inner.model_id}" if provider else self.inner.model_id
