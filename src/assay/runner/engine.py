"""The run engine: N workers pull (item, repeat) units, run target then scorers, and hand
each finished ``ItemResult`` to the sink, the summary accumulator, the hooks and the bar.

Why workers instead of one task per item: a fixed pool bounds memory (100k items never
become 100k pending tasks) and keeps per-item overhead to a few attribute lookups.

Isolation: a target exception becomes the item's ``TargetError``; a scorer exception (only
possible for a broken custom scorer — ``Scorer.run`` returns errors as results) becomes that
scorer's ``error`` result; the run goes on either way. With ``RunInfo.timeout_s`` the target
call and each scorer call of an item are cancelled after that many seconds: a hung target
fails its item with a ``TargetError`` of kind ``TimeoutError``, a hung scorer gets an error
result of kind ``TimeoutError`` (a sync function target keeps running on its abandoned
daemon thread; a scorer's sync code steps run on the event loop and cannot be interrupted,
its awaits — judge calls, async steps — can). Cancellation (Ctrl-C) stops the
workers, flushes what finished, and records the run as ``interrupted``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from assay.models.reliability import RUN_CONCURRENCY
from assay.runner.gc_policy import KeptResults
from assay.runner.hooks import RunHooks
from assay.runner.progress import RunProgress
from assay.runner.sink import ResultSink
from assay.runner.trusted import construct_named
from assay.scoring.scorer import Scorer
from assay.summary.accumulator import SummaryAccumulator
from assay.targets.base import Target, TargetOutput
from assay.types import (
    Item,
    ItemResult,
    RunInfo,
    RunStatus,
    RunSummary,
    ScoreError,
    ScoreResult,
    TargetError,
)
from assay.warm_imports import ImportWarmer

if TYPE_CHECKING:  # the statistics (and numpy) are imported at a run's end, not its start
    from assay.summary.source import ResultCounts, SummarySource

_T = TypeVar("_T")

END_OF_RUN_MODULES: tuple[str, ...] = ("numpy", "assay.summary.source", "assay.summary.stats")
"""What a run's summary imports (``SummaryAccumulator.summary``), numpy first (the largest):
imported in a thread in the run's tail, once no unit is left to start (``assay.warm_imports``)."""

log = logging.getLogger(__name__)


@dataclass
class RunPlan:
    """Everything one execution needs. ``items`` is re-iterable (called, not consumed)."""

    info: RunInfo
    items: Callable[[], Iterable[Item]]
    target: Target
    scorers: Sequence[Scorer]
    done: Callable[[], Iterable[tuple[int, int, str]]] | None = None
    """(position, repeat, item id) of the units an earlier session stored, in (position,
    repeat) order: skipped. Streamed beside the items, so a resume holds no set of keys."""
    already: int = 0
    """How many units ``done`` gives (the progress bar starts there)."""
    previous: Callable[[], Iterable[ItemResult]] | None = None
    """Results of an earlier session, to include in the summary (resume)."""
    resumed: bool = False


@dataclass(frozen=True)
class RunOutcome:
    status: RunStatus
    summary: RunSummary


class UnitDispatch(Protocol):
    """Executes a run's pending units elsewhere (the Ray backend): each unit through
    ``run_unit`` on some worker, each result stored by that worker. The engine then reads
    the summary back from the sink's ``summary_source`` (stored rows), as for a stored
    local run; ``bar`` is the run's progress bar, advanced by the dispatcher."""

    async def __call__(
        self, plan: RunPlan, units: Iterator[tuple[int, Item, int]], bar: RunProgress
    ) -> None: ...

    def stored_counts(self, plan: RunPlan) -> ResultCounts:
        """The run's counts (items, results, item errors, judge calls, usage) over every
        stored result, this session's and earlier ones': no result of a worker passed
        through this process, so the summary takes them from the store."""
        ...


def _dispatched_summary(
    dispatch: UnitDispatch,
    plan: RunPlan,
    duration_s: float,
    fallback: Callable[..., RunSummary],
    *,
    source: SummarySource,
) -> RunSummary:
    """The summary of a dispatched run: scores from the stored rows (``source``), counts
    from the store too (``stored_counts``); ``NO_SCORES`` (the summary could not be read)
    keeps the accumulator's empty one."""
    from assay.summary.source import NO_SCORES
    from assay.summary.stats import summarize_source

    if source is NO_SCORES:
        return fallback(source=source)
    counts = dispatch.stored_counts(plan)
    info = plan.info
    return summarize_source(
        info.scorers,
        source,
        threshold=info.threshold,
        items=counts.items,
        results=counts.results,
        item_errors=counts.item_errors,
        repeats=info.repeats,
        duration_s=duration_s,
        judge_calls=counts.judge_calls,
        usage=counts.usage,
        cost_usd=counts.cost_usd,
        target_usage=counts.target_usage,
        target_cost_usd=counts.target_cost_usd,
    )


class RunAborted(RuntimeError):
    """The run stopped because a hook or the sink failed; the run is stored as failed."""


def _item_ids(plan: RunPlan) -> Callable[[int], str]:
    """Position -> item id, read from the plan's items at the first call.

    The summary needs ids only for items whose repeats flipped verdicts; keeping every id
    through the run would cost memory per item (a stored run keeps nothing per item), so
    they are found again, by one more pass over the items, only when asked for."""
    table: dict[int, str] | None = None

    def item_id_for(position: int) -> str:
        nonlocal table
        if table is None:
            table = {index: item.id for index, item in enumerate(plan.items())}
        return table[position]

    return item_id_for


class ResumeMismatchError(RuntimeError):
    """A stored result's item is not the item the run now has at its position."""


def _units(plan: RunPlan) -> Iterator[tuple[int, Item, int]]:
    """The (position, item, repeat) units still to run: every item's repeats, minus the
    stored ones (``plan.done``, merged in order as both streams advance). A stored unit
    whose item id differs from the item at its position stops the run: skipping it would
    leave that item unscored while the summary counted it."""
    repeats = plan.info.repeats
    stored = iter(plan.done()) if plan.done is not None else iter(())
    pending = next(stored, None)
    for position, item in enumerate(plan.items()):
        for repeat in range(repeats):
            if pending is not None and (pending[0], pending[1]) < (position, repeat):
                raise ResumeMismatchError(
                    f"run {plan.info.id}: a stored result (position {pending[0]}, repeat "
                    f"{pending[1]}) matches none of the run's {repeats} repeats of its items"
                )
            if pending is not None and pending[0] == position and pending[1] == repeat:
                if pending[2] != item.id:
                    raise ResumeMismatchError(
                        f"run {plan.info.id}: the stored result at position {position} is "
                        f"item {pending[2]!r}, but the run's items have {item.id!r} there"
                    )
                pending = next(stored, None)
                continue
            yield position, item, repeat
    if pending is not None:
        raise ResumeMismatchError(
            f"run {plan.info.id}: a stored result at position {pending[0]} is past the run's items"
        )


NONE_OUTPUT_WARNING = "the target returned None: the scorers saw no output"
"""The item warning for a target that returned ``None`` (a function without ``return``):
it scores as an empty answer, which must show on the item rather than as a silent 0."""


async def _limited(work: Awaitable[_T], limit: asyncio.Timeout | None) -> _T:
    """``await work`` under ``limit`` (no timeout context at all without one: it costs
    ~10 µs, a sixth of the runner's per-item overhead)."""
    if limit is None:
        return await work
    async with limit:
        return await work


async def _score(
    scorer: Scorer,
    item: Item,
    output: object,
    timeout_s: float | None = None,
    call_id: str | None = None,
) -> ScoreResult:
    limit = asyncio.timeout(timeout_s) if timeout_s is not None else None
    try:
        scoring = scorer.run(
            input=item.input,
            output=output,
            ground_truth=item.expected_output,
            context=item.context,
            metadata=item.metadata,
            call_id=call_id,
        )
        return await (scoring if limit is None else _limited(scoring, limit))
    except Exception as exc:  # a broken custom scorer: isolate it to this score
        return _broken(scorer, exc, call_id, limit, timeout_s)


def _broken(
    scorer: Scorer,
    exc: Exception,
    call_id: str | None,
    limit: asyncio.Timeout | None = None,
    timeout_s: float | None = None,
) -> ScoreResult:
    """The error result of a scorer that raised (or ran past ``limit``)."""
    if isinstance(exc, TimeoutError) and limit is not None and limit.expired():
        message = f"scorer {scorer.label!r} did not finish within {timeout_s:g} s (timeout)"
        kind = "TimeoutError"
    else:
        message, kind = f"{type(exc).__name__}: {exc}", type(exc).__name__
    return ScoreResult(
        scorer_id=scorer.id,
        scorer_label=scorer.label,
        call_id=call_id or "",
        status="error",
        error=ScoreError(message=message, kind=kind),
    )


async def run_unit(plan: RunPlan, position: int, item: Item, repeat: int) -> ItemResult:
    """Target then scorers for one (item, repeat); never raises for target/scorer failures."""
    started = time.time()
    timed = plan.target.spec.kind != "stored-output"
    clock = time.perf_counter()
    error: TargetError | None = None
    output: object = None
    produced: TargetOutput | None = None
    timeout_s = plan.info.timeout_s
    limit = asyncio.timeout(timeout_s) if timeout_s is not None else None
    try:
        if limit is None:  # no timeout: no wrapper coroutine either (the common case)
            produced = await plan.target.execute(item)
        else:
            produced = await _limited(plan.target.execute(item), limit)
        output = produced.output
    except Exception as exc:
        if isinstance(exc, TimeoutError) and limit is not None and limit.expired():
            error = TargetError(
                message=f"the target did not finish within {timeout_s:g} s (timeout)",
                kind="TimeoutError",
            )
        else:
            error = TargetError(
                message=str(exc) or type(exc).__name__,
                kind=type(exc).__name__,
                traceback="".join(traceback.format_exception(exc, limit=-8)),
            )
    latency_ms = (time.perf_counter() - clock) * 1000.0 if timed else None
    warnings = list(produced.warnings) if produced is not None else []
    if error is None and output is None:
        # scorers see an empty output and usually score 0: say why, on the item
        warnings.append(NONE_OUTPUT_WARNING)
    scores: dict[str, ScoreResult] = {}
    if error is None and plan.scorers:
        # the call id says which run, item, repeat and scorer a score belongs to (and costs
        # a tenth of the random UUID ``Scorer.run`` would draw)
        call = f"{plan.info.id[:12]}-{position}-{repeat}-"
        if len(plan.scorers) == 1 and timeout_s is None:  # the common case, without a wrapper
            scorer = plan.scorers[0]
            try:
                score = await scorer.run(
                    input=item.input,
                    output=output,
                    ground_truth=item.expected_output,
                    context=item.context,
                    metadata=item.metadata,
                    call_id=call + "0",
                )
            except Exception as exc:  # a broken custom scorer: isolate it to this score
                score = _broken(scorer, exc, call + "0")
            scores[scorer.id] = score
        elif len(plan.scorers) == 1:
            scorer = plan.scorers[0]
            scores[scorer.id] = await _score(scorer, item, output, timeout_s, call + "0")
        else:
            results = await asyncio.gather(
                *(
                    _score(scorer, item, output, timeout_s, f"{call}{index}")
                    for index, scorer in enumerate(plan.scorers)
                )
            )
            scores = {
                scorer.id: result for scorer, result in zip(plan.scorers, results, strict=True)
            }
    # every part was validated where it came in (item, target output, scores): built as is
    return construct_named(
        ItemResult,
        {
            "item_id": item.id,
            "repeat": repeat,
            "position": position,
            "input": item.input,
            "output": output,
            "expected_output": item.expected_output,
            "error": error,
            "latency_ms": latency_ms,
            "scores": scores,
            "warnings": warnings,
            "started_at": started,
            "completed_at": time.time(),
            "usage": produced.usage if produced is not None else None,
            "cost_usd": produced.cost_usd if produced is not None else None,
            "samples": produced.samples if produced is not None else None,
            "meta": None,
        },
    )


async def execute(
    plan: RunPlan,
    sink: ResultSink,
    *,
    hooks: RunHooks | None = None,
    progress: bool | None = None,
    gc_freeze: bool = False,
    dispatch: UnitDispatch | None = None,
) -> RunOutcome:
    """Run ``plan`` to the end (or to cancellation) and return its status and summary.

    ``dispatch``: run the units through it instead of this process's workers (the sink
    must then have a ``summary_source``: the results are only in the store).

    ``gc_freeze``: when the sink keeps its results (``keeps_results``), keep the cyclic
    garbage collector off them while the run lasts (``assay.runner.gc_policy``)."""
    hooks = hooks or RunHooks()
    info = plan.info
    # a sink that can give the summary's numbers back (the store's: ``summary_source``)
    # spares the run from keeping any per-item scores or latencies in memory
    summary_source: Callable[[], Awaitable[SummarySource]] | None = getattr(
        sink, "summary_source", None
    )
    if dispatch is not None and summary_source is None:
        raise ValueError("a dispatched run needs a sink with a summary_source (the store)")
    accumulator = SummaryAccumulator(
        info.scorers, keep_ids=False, keep_columns=summary_source is None
    )
    earlier_s = 0.0  # active time of earlier sessions (resume): the span of their results
    if plan.previous is not None:
        first, last = float("inf"), float("-inf")
        for earlier in plan.previous():
            if dispatch is None:  # a dispatched run counts every stored result at its end
                accumulator.add(earlier)
            if earlier.started_at:
                first = min(first, earlier.started_at)
            if earlier.completed_at:
                last = max(last, earlier.completed_at)
        earlier_s = max(0.0, last - first) if last > first else 0.0
    already = plan.already
    units = _units(plan)
    total = info.total_items * info.repeats if info.total_items is not None else None
    started = time.perf_counter()
    status: RunStatus = "completed"
    failure: BaseException | None = None

    await sink.start(info, resumed=plan.resumed)
    await hooks.run_start(info)
    item_hooks = hooks.has_item_hooks
    policy = KeptResults(enabled=gc_freeze and bool(getattr(sink, "keeps_results", False)))
    kept = policy.kept if policy.enabled else None

    # what the summary imports, in a thread once no unit is left to start: in the run's tail
    # the loop mostly waits on the last answers, so the import takes turns with an idle loop
    # (earlier, each of the loop's wake-ups would wait for the GIL behind it): see
    # assay/warm_imports.py
    warmer = ImportWarmer(END_OF_RUN_MODULES)

    with RunProgress(info.name or info.id[:8], total, enabled=progress) as bar:
        bar.skip(already)

        async def worker() -> None:
            for position, item, repeat in units:
                if item_hooks:
                    await hooks.item_start(item, repeat)
                result = await run_unit(plan, position, item, repeat)
                await sink.write(result)
                if kept is not None:
                    kept()
                accumulator.add(result)
                if bar.enabled:
                    bar.advance(error=result.error is not None)
                if item_hooks:
                    await hooks.item_complete(result)
            warmer.start()  # no unit left (once; the other workers' calls return at once)

        # judge calls of this run start their endpoint's limiter at the run's concurrency
        concurrency = RUN_CONCURRENCY.set(info.concurrency)
        try:
            if dispatch is not None:
                workers = [asyncio.create_task(dispatch(plan, units, bar))]
            else:
                workers = [asyncio.create_task(worker()) for _ in range(max(1, info.concurrency))]
        finally:
            RUN_CONCURRENCY.reset(concurrency)
        try:
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            status = "interrupted"
        except Exception as exc:  # a hook or the sink failed: stop, keep what is done
            status, failure = "failed", exc
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            policy.release()

    duration_s = earlier_s + (time.perf_counter() - started)
    warmer.wait()
    summarize: Callable[..., RunSummary] = partial(
        accumulator.summary,
        info.scorers,
        threshold=info.threshold,
        duration_s=duration_s,
        item_id_for=_item_ids(plan),
        repeats=info.repeats,
    )
    if dispatch is not None:  # the workers' results are only in the store: counted there
        summarize = partial(_dispatched_summary, dispatch, plan, duration_s, summarize)
    if summary_source is None:
        summary = summarize()
    else:
        try:
            source = await summary_source()
            summary = await asyncio.to_thread(summarize, source=source)
        except Exception as exc:
            # the results are stored but their summary could not be read back: the run is
            # left resumable (a resume recomputes the summary) rather than marked completed
            # with numbers that do not describe it; the summary recorded meanwhile counts
            # the results and says nothing of their scores
            log.error("run %s: could not compute its summary from the sink: %s", info.id, exc)
            from assay.summary.source import NO_SCORES

            if status == "completed":
                status = "interrupted"
            failure = failure or exc
            summary = summarize(source=NO_SCORES)
    await sink.finish(info.id, status, summary)
    await hooks.run_end(info, status, summary)
    if failure is not None:
        raise RunAborted(f"run {info.id} stopped: {failure}") from failure
    if status == "interrupted":
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise asyncio.CancelledError
    return RunOutcome(status, summary)
