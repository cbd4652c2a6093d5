"""``monitor``: score a sample of a running application's calls, off the request path.

What the caller's thread does per call, and nothing more: call the wrapped function, run
the filter, decide the sample, take a queue slot without waiting (none free: the
observation is dropped and counted) and append the observation to an inbox (a
``collections.deque``: no lock, no system call). The worker picks the inbox up every
``poll_interval_s`` instead of being woken per call: a wake-up per request
(``call_soon_threadsafe`` writes the loop's self-pipe) makes the worker thread compete for
the GIL at the very moment each response is being written, which costs the request more
than all of the worker's own (small) CPU work (``benchmarks/live_http.py``). The wrapped
call returns and raises
exactly what it did; any error of the monitor itself is counted and logged, never raised
to the caller.

Everything else runs in ONE background thread with its own event loop: the scorers
(judge calls included), the budget, and the store writes (batched: a row per sampled
observation, idempotent by observation id, with the fate counters in the same
transaction, see ``assay.store.live_repo``). At exit (``atexit``, or ``close()``), the
worker gets ``flush_timeout_s`` to finish what is queued; what it could not score is
stored as "not scored: shutdown", so no observation is silently lost.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import functools
import inspect
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.live.budget import Budget
from assay.live.fate import FateCounts, totals
from assay.live.runs import PERIODS, live_run_id, open_live_run, period_key
from assay.live.sampling import is_sampled
from assay.models.prices import estimate_cost
from assay.runner.scorer_set import build_scorers
from assay.scoring.scorer import Scorer
from assay.store.engine import Store, open_store
from assay.summary.accumulator import SummaryAccumulator
from assay.targets.base import Target, TargetOutput, describe, jsonable
from assay.types import Item, ItemResult, ScoreResult, TargetKind, TargetSpec

log = logging.getLogger(__name__)


_OPEN_LOCK = threading.Lock()
"""Held while a monitor opens (and migrates) its store."""

_SHUTDOWN = "live: not scored, the process exited before scoring finished"


@dataclass(slots=True)
class Observation:
    """One call of the monitored function, as the worker receives it."""

    id: str
    input: Any
    output: Any
    expected_output: Any
    at: float
    latency_ms: float
    rate: float
    """The sampling rate this observation was sampled at (stored on its row)."""


@dataclass
class _Pending:
    """Results scored but not yet stored, with the fate each one will count as."""

    results: list[ItemResult] = field(default_factory=list)
    fates: list[tuple[str, str | None]] = field(default_factory=list)


class Monitor:
    """The state of one monitor: counters, budget, the worker thread and its loop."""

    def __init__(
        self,
        *,
        scorers: Sequence[Any],
        name: str,
        target: TargetSpec,
        rate: float = 0.1,
        filter: Callable[[Any, Any], bool] | None = None,
        budget_usd: float | None = None,
        budget_window: str | float = "day",
        store: Store | str | None = None,
        deterministic: bool = False,
        period: str = "day",
        queue_size: int = 1000,
        concurrency: int = 8,
        flush_timeout_s: float = 5.0,
        batch_size: int = 100,
        flush_interval_s: float = 0.5,
        poll_interval_s: float = 0.05,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate: must be between 0 and 1, got {rate!r}")
        if period != "all" and period not in PERIODS:
            raise ValueError(f"period: expected one of {[*PERIODS, 'all']}, got {period!r}")
        if queue_size < 1 or concurrency < 1 or batch_size < 1:
            raise ValueError("queue_size, concurrency and batch_size must be at least 1")
        self.scorers: list[Scorer] = build_scorers(scorers)
        if not self.scorers:
            raise ValueError("scorers: a monitor needs at least one scorer")
        self.name = name
        self.target = target
        self.rate = rate
        self.filter = filter
        self.deterministic = deterministic
        self.period = period
        self.budget = Budget(budget_usd, budget_window)
        self.counts = FateCounts()
        self.flush_timeout_s = flush_timeout_s
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.poll_interval_s = poll_interval_s
        self._inbox: collections.deque[Observation] = collections.deque()
        self.concurrency = concurrency
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=20)
        self._store_arg = store
        self._store: Store | None = None
        self._runs: dict[str, str] = {}
        self._positions: dict[str, int] = {}
        self._slots = threading.BoundedSemaphore(queue_size)
        self._closed = False
        self._in_flight = 0
        self._lock = threading.Lock()
        self._pending = _Pending()
        self._tasks: dict[asyncio.Task[None], Observation] = {}
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._sem = asyncio.Semaphore(concurrency)
        self._thread = threading.Thread(target=self._thread_main, name=f"assay-live-{name}")
        self._thread.daemon = True
        self._running = threading.Event()
        self._thread.start()
        self._running.wait(10.0)  # observations go to a loop that is already running
        atexit.register(self.close)

    # ------------------------------------------------------------------ caller side
    def observe(
        self,
        observation_id: str | Callable[[], str],
        input: Any,
        output: Any,
        *,
        expected_output: Any = None,
        latency_ms: float = 0.0,
    ) -> None:
        """Record one call; never raises, never blocks (beyond a lock held for nanoseconds).
        ``observation_id`` may be a function: called only when the id is needed."""
        try:
            self._observe(observation_id, input, output, expected_output, latency_ms)
        except Exception:  # the monitor's own failure is never the caller's
            log.exception("assay monitor %r: could not record an observation", self.name)

    def _observe(
        self,
        observation_id: str | Callable[[], str],
        input: Any,
        output: Any,
        expected: Any,
        latency_ms: float,
    ) -> None:
        if self.filter is not None:
            try:
                keep = bool(self.filter(input, output))
            except Exception:
                self.counts.add("filter_error")
                return
            if not keep:
                self.counts.add("filtered_out")
                return
        rate = self.rate  # one value for the decision and the row that records it
        if rate <= 0.0:  # decided without an id: rate 0 costs no id at all
            self.counts.add("not_sampled")
            return
        obs_id = observation_id if isinstance(observation_id, str) else observation_id()
        if not is_sampled(obs_id, rate, deterministic=self.deterministic):
            self.counts.add("not_sampled")
            return
        if self._closed:
            self.counts.add("dropped", "shutdown")
            return
        if not self._slots.acquire(blocking=False):
            self.counts.add("dropped", "queue_full")
            return
        with self._lock:
            self._in_flight += 1
        # deque.append is atomic; the worker drains it (also once more after its last flush)
        self._inbox.append(
            Observation(obs_id, input, output, expected, time.time(), latency_ms, rate)
        )

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1
        self._slots.release()

    # ------------------------------------------------------------------ worker side
    def _thread_main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        except Exception:
            log.exception("assay monitor %r: the worker stopped", self.name)
        finally:
            try:  # as asyncio.run does: pooled HTTP sessions close inside their loop
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            except Exception:
                log.debug("assay monitor %r: shutting down async generators failed", self.name)
            self._loop.close()

    def _drain(self) -> None:
        """Start scoring what the callers appended, at most ``concurrency`` at a time: the
        backlog stays plain observations in the inbox, not a thousand waiting tasks."""
        while self._inbox and len(self._tasks) < self.concurrency and not self._cancelling:
            self._accept(self._inbox.popleft())

    def _accept(self, obs: Observation) -> None:
        task = self._loop.create_task(self._score(obs))
        self._tasks[task] = obs
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        obs = self._tasks.pop(task, None)
        if obs is not None and task.cancelled():  # cancelled before it started: no row yet
            self._release()
            self._keep(obs, {}, ("dropped", "shutdown"), [_SHUTDOWN])
        self._drain()  # a scoring slot is free: the next observation need not wait a poll

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._running.set()
        next_flush = time.monotonic() + self.flush_interval_s
        while not self._stop.is_set() and not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_interval_s)
            self._drain()
            if time.monotonic() >= next_flush:
                self._flush()
                next_flush = time.monotonic() + self.flush_interval_s
        # shutdown: what is queued gets what is left of the flush time, then is cancelled
        deadline = self._close_deadline
        self._drain()
        while self._tasks and time.monotonic() < deadline:  # finished tasks drain the inbox
            await asyncio.wait(
                list(self._tasks),
                timeout=max(0.0, deadline - time.monotonic()),
                return_when=asyncio.FIRST_COMPLETED,
            )
        self._cancelling = True
        while self._tasks:  # also any accepted while the queue was being drained
            left = list(self._tasks)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
        self._closed = True  # a caller racing with close now drops instead of appending
        while self._inbox:  # appended after the drain above: stored as not scored
            obs = self._inbox.popleft()
            self._release()
            self._keep(obs, {}, ("dropped", "shutdown"), [_SHUTDOWN])
        self._flush(final=True)

    async def _score(self, obs: Observation) -> None:
        fate: tuple[str, str | None] = ("failed", "monitor_error")
        scores: dict[str, ScoreResult] = {}
        warnings: list[str] = []
        try:
            async with self._sem:
                if not self.budget.allows(time.time()):
                    fate = ("dropped", "budget")
                    warnings.append(
                        f"live: not scored, judge budget of ${self.budget.limit_usd} per "
                        f"{self.budget.window_s:g}s window used up"
                    )
                else:
                    scores = await self._run_scorers(obs)
                    cost = sum(_cost(score) for score in scores.values())
                    self.budget.spend(cost, time.time())
                    errors = [s for s in scores.values() if s.status == "error"]
                    fate = ("failed", "scorer_error") if errors else ("scored", None)
        except asyncio.CancelledError:
            fate = ("dropped", "shutdown")
            warnings = [_SHUTDOWN]
        except Exception as exc:  # a scorer that raises instead of returning an error
            log.warning("assay monitor %r: scoring failed: %s", self.name, exc)
            warnings = [f"live: scoring failed: {type(exc).__name__}: {exc}"]
        finally:
            self._release()
        self._keep(obs, scores, fate, warnings)

    def _keep(
        self,
        obs: Observation,
        scores: dict[str, ScoreResult],
        fate: tuple[str, str | None],
        warnings: list[str],
    ) -> None:
        """Queue the observation's row for the next store write."""
        result = ItemResult(
            item_id=obs.id,
            input=jsonable(obs.input),
            output=jsonable(obs.output),
            expected_output=jsonable(obs.expected_output),
            latency_ms=obs.latency_ms,
            scores=scores,
            warnings=warnings,
            started_at=obs.at,
            completed_at=time.time(),
            meta={
                "decision": "sampled",
                "rate": obs.rate,
                "deterministic": self.deterministic,
                "fate": fate[0],
                "reason": fate[1],
            },
        )
        self._pending.results.append(result)
        self._pending.fates.append(fate)
        self.recent.append(
            {"id": obs.id, "at": obs.at, "fate": fate[0], "reason": fate[1]}
            | {"scores": {k: v.score for k, v in scores.items()}}
        )
        if len(self._pending.results) >= self.batch_size:
            self._flush()

    async def _run_scorers(self, obs: Observation) -> dict[str, ScoreResult]:
        output = jsonable(obs.output)
        input = jsonable(obs.input)
        expected = jsonable(obs.expected_output)
        results = await asyncio.gather(
            *(
                scorer.run(output=output, input=input, ground_truth=expected, call_id=obs.id)
                for scorer in self.scorers
            )
        )
        return {scorer.id: result for scorer, result in zip(self.scorers, results, strict=True)}

    # ------------------------------------------------------------------ storing
    def _open(self) -> Store:
        if self._store is None:
            arg = self._store_arg
            with _OPEN_LOCK:  # migrations (alembic) are not thread-safe within a process
                self._store = arg if isinstance(arg, Store) else open_store(arg)
        return self._store

    def _run_for(self, store: Store, at: float) -> str:
        key = period_key(self.period, at)
        run_id = self._runs.get(key)
        if run_id is not None:
            return run_id
        run_id, existed = open_live_run(
            store, self.name, key, self.target, self.scorers, concurrency=self.concurrency
        )
        if existed:
            state = store.live.state(run_id)
            budget = state.get("budget") or {}
            if budget.get("window_s") == self.budget.window_s:
                self.budget.resume(
                    float(budget.get("window_start") or 0.0),
                    float(budget.get("spent_usd") or 0.0),
                    int(budget.get("scored") or 0),
                    time.time(),
                )
        self._positions[run_id] = store.live.next_position(run_id)
        self._runs[key] = run_id
        return run_id

    def _flush(self, *, final: bool = False) -> bool:
        """Store what is pending plus the counters (one transaction per run); False when the
        write failed. The fates of the pending results count once they are stored; a failed
        write is retried at the next flush, or at the last one counted as
        ``failed: store_error``."""
        pending, self._pending = self._pending, _Pending()
        delta = self.counts.take_delta()
        if not pending.results and not delta and not final:
            return True
        written: set[str] = set()
        by_run: dict[str, tuple[list[ItemResult], list[tuple[str, str | None]]]] = {}
        try:
            store = self._open()
            run_id = self._run_for(store, time.time())
            for result, fate in zip(pending.results, pending.fates, strict=True):
                rid = self._run_for(store, result.started_at)
                position = self._positions[rid]
                self._positions[rid] = position + 1
                rows, fates = by_run.setdefault(rid, ([], []))
                rows.append(result.model_copy(update={"position": position}))
                fates.append(fate)
            for rid, (rows, fates) in by_run.items():
                self._count_stored(store.live.write(rid, rows, fates=fates))
                written.add(rid)
            store.live.write(run_id, [], counts=delta, state=self._state())
        except Exception as exc:
            log.warning("assay monitor %r: could not store results: %s", self.name, exc)
            self.counts.give_back(delta)
            if not by_run:  # failed before grouping: nothing of this batch was stored
                by_run = {"": (pending.results, pending.fates)}
            left = [
                (row, fate)
                for rid, (rows, fates) in by_run.items()
                if rid not in written
                for row, fate in zip(rows, fates, strict=True)
            ]
            if final:  # nothing will retry: the unstored observations end as failed
                self.counts.add("failed", "store_error", len(left), delta=False)
            else:
                self._pending.results[:0] = [row for row, _ in left]
                self._pending.fates[:0] = [fate for _, fate in left]
            return False
        if final:
            for rid in set(self._runs.values()):
                try:
                    self._finish(store, rid)
                except Exception as exc:
                    log.warning("assay monitor %r: no summary for %s: %s", self.name, rid, exc)
        return True

    def _count_stored(self, counted: Mapping[str, Any]) -> None:
        for fate, value in counted.items():
            if isinstance(value, Mapping):
                for reason, n in value.items():
                    self.counts.add(fate, reason, n, delta=False)
            else:
                self.counts.add(fate, None, value, delta=False)

    def _state(self) -> dict[str, Any]:
        return {
            "monitor": self.name,
            "rate": self.rate,
            "deterministic": self.deterministic,
            "filter": self.filter is not None,
            "scorers": [s.id for s in self.scorers],
            "budget": self.budget.snapshot(),
            "updated_at": time.time(),
        }

    def _finish(self, store: Store, run_id: str) -> None:
        record = store.runs.get(run_id)
        accumulator = SummaryAccumulator(record.info.scorers)
        for result in store.runs.results(run_id):
            accumulator.add(result)
        summary = accumulator.summary(record.info.scorers, threshold=None, duration_s=None)
        store.runs.finish(run_id, "completed", summary)

    # ------------------------------------------------------------------ control
    def snapshot(self) -> dict[str, Any]:
        """Counts (with ``in_flight``), budget and the latest fates, for status views."""
        with self._lock:
            in_flight = self._in_flight
        return {
            "name": self.name,
            "rate": self.rate,
            "counts": self.counts.totals(),
            "in_flight": in_flight,
            "budget": self.budget.snapshot(),
            "recent": list(self.recent),
        }

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until everything sampled so far is stored; False when ``timeout_s`` passed
        first or the store write failed (it is retried at the next flush)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                idle = self._in_flight == 0
            if idle:
                done = asyncio.run_coroutine_threadsafe(_call(self._flush), self._loop)
                # (in_flight counts inbox entries too: idle means the inbox is empty)
                try:
                    return bool(done.result(max(0.0, deadline - time.monotonic())))
                except Exception:
                    return False
            time.sleep(0.01)
        return False

    def close(self, timeout_s: float | None = None) -> None:
        """Stop taking observations, give the queued ones ``flush_timeout_s``, store the rest
        as not scored, and write the run's summary. Safe to call twice."""
        if self._closed:
            return
        timeout = self.flush_timeout_s if timeout_s is None else timeout_s
        self._close_deadline = time.monotonic() + timeout
        self._closed = True
        try:
            self._loop.call_soon_threadsafe(self._stop_early)
        except RuntimeError:  # the loop is already closed
            return
        self._thread.join(timeout + 10.0)
        atexit.unregister(self.close)

    def _stop_early(self) -> None:
        if self._stop is not None:
            self._stop.set()

    _close_deadline = 0.0
    _cancelling = False


async def _call(fn: Callable[[], bool]) -> bool:
    return fn()


def _cost(score: ScoreResult) -> float:
    total = 0.0
    for call in score.judge_calls:
        if call.cached:
            continue
        cost = call.cost_usd
        if cost is None:
            cost = estimate_cost(call.provider, call.model_id, call.usage)
        total += cost or 0.0
    return total


# ---------------------------------------------------------------------- wrapping
def _input_of(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    if len(args) == 1 and not kwargs:
        return args[0]
    return {"args": list(args), "kwargs": dict(kwargs)}


class MonitoredTarget:
    """A ``Target`` whose every ``execute`` is observed (the item id is the observation id)."""

    def __init__(self, target: Target, monitor: Monitor) -> None:
        self.wrapped = target
        self.monitor = monitor

    @property
    def spec(self) -> TargetSpec:
        return self.wrapped.spec

    async def execute(self, item: Item) -> TargetOutput:
        started = time.perf_counter()
        out = await self.wrapped.execute(item)
        self.monitor.observe(
            item.id,
            item.input,
            out.output,
            expected_output=item.expected_output,
            latency_ms=(time.perf_counter() - started) * 1000.0,
        )
        return out


class MonitoredAgent:
    """An agent (``generate(input)``) or workflow (``run(input)``) whose method is observed.

    Why a proxy and not a ``Target``: the application keeps calling ``agent.generate(x)``
    exactly as before (every other attribute is the agent's own), and the proxy still has
    that method, so ``assay run`` resolves it as the same kind of target."""

    def __init__(
        self,
        agent: Any,
        method: str,
        monitor: Monitor,
        observation_id: Callable[..., str] | None,
    ) -> None:
        self.wrapped = agent
        self.monitor = monitor
        self._method = method
        self._observation_id = observation_id
        inner = getattr(agent, method)
        if inspect.iscoroutinefunction(inner):

            @functools.wraps(inner)
            async def async_method(input: Any, *args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                result = await inner(input, *args, **kwargs)
                _observe_call(monitor, observation_id, (input, *args), kwargs, result, started)
                return result

            setattr(self, method, async_method)
        else:

            @functools.wraps(inner)
            def sync_method(input: Any, *args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                result = inner(input, *args, **kwargs)
                if inspect.isawaitable(result):  # a plain method returning a coroutine
                    return _observed_later(
                        monitor, observation_id, (input, *args), kwargs, result, started
                    )
                _observe_call(monitor, observation_id, (input, *args), kwargs, result, started)
                return result

            setattr(self, method, sync_method)

    def __getattr__(self, name: str) -> Any:  # only called for names the proxy lacks
        return getattr(self.wrapped, name)

    def __repr__(self) -> str:
        return f"<monitored {self._method}() of {self.wrapped!r}>"


async def _observed_later(
    mon: Monitor,
    id_of: Callable[..., str] | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    pending: Any,
    started: float,
) -> Any:
    result = await pending
    _observe_call(mon, id_of, args, kwargs, result, started)
    return result


def _agent_method(obj: Any) -> str | None:
    """``generate`` or ``run`` when ``obj`` is an agent or workflow object (the order
    ``assay.targets.resolve`` uses), else None."""
    if inspect.isroutine(obj) or isinstance(obj, type):
        return None
    for method in ("generate", "run"):
        if callable(getattr(obj, method, None)):
            return method
    return None


def _new_id(id_of: Callable[..., str] | None, args: Any, kwargs: Any) -> str:
    if id_of is not None:
        try:
            return str(id_of(*args, **kwargs))
        except Exception:
            log.warning("assay monitor: observation_id failed; a random id is used")
    return uuid.uuid4().hex


def _observe_call(
    mon: Monitor,
    id_of: Callable[..., str] | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    result: Any,
    started: float,
) -> None:
    """Hand a finished call to ``mon`` (the sync and async wrappers share this)."""
    mon.observe(
        functools.partial(_new_id, id_of, args, kwargs),
        _input_of(args, kwargs),
        result,
        latency_ms=(time.perf_counter() - started) * 1000.0,
    )


def monitor(
    fn: Any = None,
    /,
    *,
    scorers: Sequence[Any],
    rate: float = 0.1,
    filter: Callable[[Any, Any], bool] | None = None,
    budget_usd: float | None = None,
    budget_window: str | float = "day",
    store: Store | str | None = None,
    name: str | None = None,
    deterministic: bool = False,
    observation_id: Callable[..., str] | None = None,
    period: str = "day",
    queue_size: int = 1000,
    concurrency: int = 8,
    flush_timeout_s: float = 5.0,
) -> Any:
    """Score a sample of ``fn``'s calls in the background and store them as a live run.

    ``fn``: a function, an async function, an agent (``generate(input)``) or workflow
    (``run(input)``) object (returned as a proxy whose method is observed, every other
    attribute the object's own) or an assay target (``execute(item)``); without it, a
    decorator. ``filter(input, output)`` picks the eligible calls, ``rate`` samples
    them (by ``observation_id`` when ``deterministic``), ``budget_usd`` caps judge spending
    per ``budget_window`` (``"hour"``, ``"day"``, seconds). ``observation_id(*args,
    **kwargs)`` names a call (retries of one request should give the same id: stored once).
    The returned wrapper has the ``Monitor`` as ``.monitor``.
    """

    def wrap(target: Any) -> Any:
        is_target = isinstance(target, Target) and not callable(target)
        method = None if is_target else _agent_method(target)
        label = target.spec.label if is_target else describe(target)
        kind: TargetKind = "callable"
        if method is not None:
            kind = "agent" if method == "generate" else "workflow"
        spec = (
            target.spec
            if is_target
            else TargetSpec(kind=kind, label=label, ref=label, config={"live": True})
        )
        mon = Monitor(
            scorers=scorers,
            name=name or label,
            target=spec,
            rate=rate,
            filter=filter,
            budget_usd=budget_usd,
            budget_window=budget_window,
            store=store,
            deterministic=deterministic,
            period=period,
            queue_size=queue_size,
            concurrency=concurrency,
            flush_timeout_s=flush_timeout_s,
        )
        if is_target:
            return MonitoredTarget(target, mon)
        if method is not None:
            return MonitoredAgent(target, method, mon, observation_id)
        if inspect.iscoroutinefunction(target):

            @functools.wraps(target)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                result = await target(*args, **kwargs)
                _observe_call(mon, observation_id, args, kwargs, result, started)
                return result

            async_wrapper.monitor = mon  # type: ignore[attr-defined]
            return async_wrapper

        @functools.wraps(target)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            result = target(*args, **kwargs)
            _observe_call(mon, observation_id, args, kwargs, result, started)
            return result

        wrapper.monitor = mon  # type: ignore[attr-defined]
        return wrapper

    if fn is None:
        return wrap
    return wrap(fn)


__all__ = [
    "Monitor",
    "MonitoredAgent",
    "MonitoredTarget",
    "Observation",
    "live_run_id",
    "monitor",
    "totals",
]
