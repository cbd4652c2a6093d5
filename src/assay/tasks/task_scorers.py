"""A task's metrics as assay scorers: one per (metric, filter pipeline), lm-eval's result keys.

Every ``metric_list`` entry of every pipeline becomes a ``Scorer`` whose id is lm-eval's
result key, ``"<metric>,<pipeline>"`` (``exact_match,strict-match``). For one doc it runs
the pipeline's filters (its preprocess step) and the task's processing (score step) and returns:

* ``value``: the per-doc number (0/1 for acc and exact_match, the log-likelihood for
  perplexity). Corpus metrics have no per-doc number in lm-eval; there the value is the
  metric on the doc alone (sentence BLEU/chrF/TER, the doc's Brier score or perplexity),
  and for f1/mcc whether the doc's prediction equals its gold, so drill-downs and item
  comparisons stay meaningful;
* ``corpus``: ``{"value": per-doc value, "filtered": ..., "metrics": {key: value}}``: the
  exact lm-eval per-doc value(s), which the run's aggregations (``lm-eval:<name>``, with a
  stderr aggregation beside it) combine over the corpus exactly as lm-eval does.

A ``metric_list`` entry that names a registered assay scorer (an LLM judge such as
``faithfulness``, or any code scorer) runs that scorer on the pipeline's filtered response
instead (lm-eval cannot put a judge in a task); its ``kwargs`` are the scorer's params.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from numbers import Real
from typing import Any

from assay.fingerprint import digest, value_identity
from assay.scoring.context import ScorerCall, StepContext
from assay.scoring.registry import create_scorer
from assay.scoring.score_value import Score
from assay.scoring.scorer import Scorer
from assay.summary.aggregations import get_aggregation, register_aggregation
from assay.tasks.combined import combined_scorer
from assay.tasks.config import MetricEntry, Pipeline
from assay.tasks.metrics import TASK_METRICS, resolve_aggregation, stderr_for
from assay.tasks.processing import (
    COMBINED_METRICS,
    DocOutcome,
    filter_doc,
    is_scorer_metric,
    process_filtered,
)
from assay.tasks.responses import as_json
from assay.tasks.scales import metric_scale
from assay.tasks.task import Task

DEFAULT_BOOTSTRAP_ITERS = 100_000
"""lm-eval's default number of bootstrap resamples for the stderr of non-mean aggregations."""

_CORRECTNESS_AGGREGATIONS = frozenset({"f1", "matthews_corrcoef"})
"""Corpus aggregations over (gold, prediction) pairs: a doc's own value is correctness."""

_EMPTY_DOC_VALUES = {"weighted_perplexity": 1.0, "bits_per_byte": 0.0}
"""A zero-length document's own value, per weighted aggregation (see ``doc_value``)."""


def result_key(metric: str, pipeline: str) -> str:
    """lm-eval's result key: ``"<metric>,<filter>"``."""
    return f"{metric},{pipeline}"


def task_identity(task: Task) -> str:
    """A hash of everything in the task config that decides its scores (``!function``s by
    their code), so a changed task config changes every task scorer's fingerprint."""
    return digest(value_identity(task.config.model_dump(mode="python")))


# ----------------------------------------------------------------- aggregations


def _payload_values(payloads: list[Any]) -> list[Any]:
    return [p["value"] if isinstance(p, Mapping) else p for p in payloads]


def run_aggregation_names(
    metric: str, aggregation: str | Callable[..., Any] | None, bootstrap_iters: int
) -> tuple[str, ...]:
    """The assay run aggregations for a task metric: ``lm-eval:<aggregation>`` (the corpus
    value, as lm-eval computes it) and, for registered aggregations,
    ``lm-eval-stderr:<metric>:<aggregation>@<iters>`` (lm-eval's stderr). Registered here
    on first use, so a task run's summary carries both."""
    name, fn = resolve_aggregation(metric, aggregation)
    if callable(aggregation):
        name = f"fn:{getattr(aggregation, '__module__', '')}.{name}"
    key = f"lm-eval:{name}"
    _ensure(key, lambda payloads: float(fn(_payload_values(payloads))), f"lm-eval {name}")
    if callable(aggregation):
        return (key,)
    stderr_key = f"lm-eval-stderr:{metric}:{name}@{bootstrap_iters}"

    def stderr(payloads: list[Any]) -> float:
        value = stderr_for(
            name, _payload_values(payloads), bootstrap_iters=bootstrap_iters, metric=metric
        )
        return math.nan if value is None else float(value)

    _ensure(stderr_key, stderr, f"lm-eval stderr of {name} for {metric}")
    return (key, stderr_key)


def _ensure(name: str, fn: Callable[[list[Any]], float], description: str) -> None:
    try:
        get_aggregation(name)
    except KeyError:
        register_aggregation(name, fn, kind="corpus", description=description)


# ----------------------------------------------------------------- per-doc steps


def _doc(call: ScorerCall) -> Mapping[str, Any]:
    doc = call.metadata.get("doc")
    if not isinstance(doc, Mapping):
        raise ValueError("the item is not a task doc (its metadata has no 'doc' object)")
    return doc


class TaskMetricStep:
    """The score step of one (metric, pipeline) scorer. Its plain attributes are its
    fingerprint (the task's identity, the pipeline, the metric); the task object itself
    is not part of it."""

    def __init__(
        self, task: Task, pipeline: Pipeline, entry: MetricEntry, *, identity: str
    ) -> None:
        self.task = task
        self.pipeline = pipeline
        self.metric = entry.name
        self.aggregation = resolve_aggregation(entry.name, entry.aggregation)[0]
        # a custom aggregation (`aggregation: !function m.fn`) is kept as given: its name
        # is not registered (fingerprinted by its code, as every !function)
        self.custom_aggregation = entry.aggregation if callable(entry.aggregation) else None
        self.identity = identity
        self.pipeline_name = pipeline.name

    def __call__(self, ctx: StepContext) -> Score:
        results = ctx.preprocess_result
        if not isinstance(results, list):
            raise ValueError("the filter step gave no per-request results")
        outcome = process_filtered(self.task, _doc(ctx.call), results, self.pipeline)
        return self.score(outcome)

    def score(self, outcome: DocOutcome) -> Score:
        if self.metric not in outcome.metrics:
            emitted = ", ".join(sorted(outcome.metrics)) or "nothing"
            raise ValueError(
                f"metric {self.metric!r} was not computed for this doc (emitted: {emitted})"
            )
        value = outcome.metrics[self.metric]
        own = {
            key: as_json(v)
            for key, v in outcome.metrics.items()
            if outcome.sources.get(key) == self.metric
        }
        corpus = {"value": as_json(value), "filtered": as_json(outcome.filtered), "metrics": own}
        extra = {
            key: float(v)
            for key, v in own.items()
            if key != self.metric and _is_number(v) and math.isfinite(float(v))
        }
        return Score(self.doc_value(value), values=extra, corpus=corpus)

    def doc_value(self, value: Any) -> float:
        """The doc's own number (see the module docstring)."""
        if _is_number(value):
            return float(value)
        if self.aggregation in _CORRECTNESS_AGGREGATIONS and _is_pair(value):
            return 1.0 if value[0] == value[1] else 0.0
        if self.aggregation in _EMPTY_DOC_VALUES and _is_pair(value) and not any(value):
            # an empty document (no words or bytes, loglikelihood 0): it adds nothing to the
            # corpus value (lm-eval sums both sides); on its own it is the limit, no surprise
            return _EMPTY_DOC_VALUES[self.aggregation]
        fn = self.custom_aggregation or resolve_aggregation(self.metric, self.aggregation)[1]
        try:
            single = float(fn([value]))
        except Exception as exc:
            raise ValueError(
                f"metric {self.metric!r} has no per-doc number for {value!r} "
                f"({type(exc).__name__}: {exc}); its corpus value is still aggregated"
            ) from exc
        return single


class FilterStep:
    """The preprocess step of a task scorer: the pipeline's filtered per-request results
    (kept in the result's steps, so a drill-down shows what the metric compared)."""

    def __init__(self, task: Task, pipeline: Pipeline, *, identity: str) -> None:
        self.task = task
        self.pipeline = pipeline
        self.identity = identity
        self.pipeline_name = pipeline.name

    def __call__(self, ctx: StepContext) -> list[Any]:
        return filter_doc(self.task, _doc(ctx.call), ctx.call.output, self.pipeline)


class MetricReason:
    """The reason step: what the pipeline extracted and what the metric made of it, e.g.
    ``strict-match extracted '72' → exact_match 1`` (the extraction notes an optimizer's
    reflection model reads)."""

    def __init__(self, metric: str, pipeline: str) -> None:
        self.metric = metric
        self.pipeline = pipeline

    def __call__(self, ctx: StepContext) -> str:
        results = ctx.preprocess_result
        shown: Any = results[0] if isinstance(results, list) and len(results) == 1 else results
        text = repr(as_json(shown))
        if len(text) > 300:
            text = text[:297] + "..."
        return f"{self.pipeline} extracted {text} → {self.metric} {ctx.score:g}"


def _is_number(value: Any) -> bool:
    return isinstance(value, Real)


def _is_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2


class FilteredOutput:
    """``prepare_call`` for an assay scorer inside a task: the scorer sees the pipeline's
    filtered response as the output (the first one when repeats remain)."""

    def __init__(self, task: Task, pipeline: Pipeline, *, identity: str) -> None:
        self.task = task
        self.pipeline = pipeline
        self.identity = identity
        self.pipeline_name = pipeline.name

    def __call__(self, call: ScorerCall) -> ScorerCall:
        results = filter_doc(self.task, _doc(call), call.output, self.pipeline)
        filtered = results[0] if len(results) == 1 else results
        if isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
            filtered = filtered[0]
        return replace(call, output=filtered)


# ----------------------------------------------------------------- the factory


def task_scorers(task: Task, *, bootstrap_iters: int = DEFAULT_BOOTSTRAP_ITERS) -> list[Scorer]:
    """One scorer per (metric, pipeline) of ``task``, in config order."""
    identity = task_identity(task)
    scorers: list[Scorer] = []
    for pipeline in task.config.pipelines():
        for entry in pipeline.metric_list:
            key = result_key(entry.name, pipeline.name)
            if entry.name in COMBINED_METRICS:
                combined = combined_scorer(task, pipeline, entry, key, identity)
                if all(s.id != combined.id for s in scorers):  # agreement: once per set
                    scorers.append(combined)
                continue
            if is_scorer_metric(entry):
                inner = create_scorer(str(entry.metric), **entry.kwargs)
                scorers.append(
                    inner.with_options(
                        id=key,
                        label=key,
                        prepare_call=FilteredOutput(task, pipeline, identity=identity),
                    )
                )
                continue
            scorers.append(_metric_scorer(task, pipeline, entry, key, identity, bootstrap_iters))
    return scorers


def _metric_scorer(
    task: Task,
    pipeline: Pipeline,
    entry: MetricEntry,
    key: str,
    identity: str,
    bootstrap_iters: int,
) -> Scorer:
    registered = TASK_METRICS.find(entry.name)
    higher = entry.higher_is_better
    if higher is None:
        higher = registered.higher_is_better if registered is not None else True
    step = TaskMetricStep(task, pipeline, entry, identity=identity)
    scorer = Scorer(
        id=key,
        label=key,
        description=f"lm-eval metric {entry.name} on filter pipeline {pipeline.name!r} "
        f"of task {task.name}",
        params={"task": task.name, "metric": entry.name, "filter": pipeline.name},
        higher_is_better=higher,
        score_range=metric_scale(entry.name),
        aggregations=run_aggregation_names(entry.name, entry.aggregation, bootstrap_iters),
    )
    return (
        scorer.preprocess(FilterStep(task, pipeline, identity=identity))
        .score(step)
        .reason(MetricReason(entry.name, pipeline.name))
    )
