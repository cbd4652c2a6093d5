"""One document through one filter pipeline: responses → filtered → per-doc metric values.

This is lm-eval's flow for a single doc (A.1 of the reference study): the doc's responses
become *instances* (one list of repeats per request), the pipeline's filters run over
them, and the doc's results go to the task's ``process_results`` (a ``!function``) or to
the built-in processing of its output type. Everything is a pure function of the task
config, the doc and its responses, so the model path and recorded predictions give the
same numbers, and each (metric, pipeline) scorer can recompute the doc on its own.

Repeats that survive the filters (no ``take_first``) are scored one by one and reduced with
the metric entry's ``reduction`` (v0.5's stage; first, mean, max, majority, pass@k); a
metric with several values and no reduction is an error, never a silently chosen one.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.tasks.config import MetricEntry, Pipeline
from assay.tasks.filters import apply_filter_pipeline
from assay.tasks.hf_metrics import hf_evaluate_metric
from assay.tasks.metrics import (
    MetricValues,
    process_generate_until,
    process_loglikelihood,
    process_loglikelihood_rolling,
    process_multiple_choice,
    reduce_scores,
    score_generation,
)
from assay.tasks.responses import instances
from assay.tasks.task import Task


@dataclass(frozen=True, slots=True)
class DocOutcome:
    """A doc's filtered result and its per-doc metric values for one pipeline.

    ``filtered`` is what lm-eval reports: the single filtered response for generation
    tasks, the list of per-request results otherwise. ``sources`` names, for each emitted
    key, the metric entry that produced it (a dict-valued metric emits several keys).
    """

    filtered: Any
    metrics: dict[str, Any]
    sources: dict[str, str]


COMBINED_METRICS = frozenset({"ensemble", "filter_agreement", "filter_diversity"})
"""Metric entries that combine other metrics or pipelines (``tasks.combined``): neither
task metrics nor registered scorers."""


def uses_mutual_info(metrics: Sequence[MetricEntry]) -> bool:
    """Whether the task needs unconditional log-likelihoods (``acc_mutual_info``)."""
    return any(entry.name == "acc_mutual_info" for entry in metrics)


def is_scorer_metric(entry: MetricEntry) -> bool:
    """Whether ``entry`` names a registered assay scorer (an LLM judge, a code scorer)
    rather than a task metric: those are run as assay scorers on the filtered response."""
    if not isinstance(entry.metric, str) or entry.metric in COMBINED_METRICS:
        return False
    from assay.scoring.registry import SCORER_TYPES
    from assay.tasks.metrics import TASK_METRICS

    return entry.metric not in TASK_METRICS and entry.metric in SCORER_TYPES


def task_metrics_of(pipeline: Pipeline) -> list[MetricEntry]:
    """The pipeline's entries computed by task-metric processing (assay scorers apart)."""
    return [
        entry
        for entry in pipeline.metric_list
        if not is_scorer_metric(entry) and entry.name not in COMBINED_METRICS
    ]


def doc_instances(task: Task, doc: Mapping[str, Any], responses: Any) -> list[list[Any]]:
    """``responses`` as lm-eval instances for ``doc`` (shape-checked)."""
    choices = len(task.doc_to_choice(doc)) if task.output_type == "multiple_choice" else 0
    mutual = uses_mutual_info(task.config.metric_entries())
    return instances(task.output_type, responses, choices=choices, mutual_info=mutual)  # type: ignore[arg-type]


def filter_doc(task: Task, doc: Mapping[str, Any], responses: Any, pipeline: Pipeline) -> list[Any]:
    """The per-request filtered results of ``doc`` under ``pipeline``."""
    resps = doc_instances(task, doc, responses)
    return apply_filter_pipeline(pipeline.steps, resps, [doc] * len(resps))


def process_doc(
    task: Task, doc: Mapping[str, Any], responses: Any, pipeline: Pipeline
) -> DocOutcome:
    """Filter ``doc``'s responses with ``pipeline`` and compute its per-doc metric values."""
    return process_filtered(task, doc, filter_doc(task, doc, responses, pipeline), pipeline)


def process_filtered(
    task: Task, doc: Mapping[str, Any], results: list[Any], pipeline: Pipeline
) -> DocOutcome:
    """The per-doc metric values of ``doc`` from its filtered per-request ``results``."""
    entries = task_metrics_of(pipeline)
    names = [entry.name for entry in entries]
    filtered = results[0] if task.output_type == "generate_until" else results
    custom = task.config.process_results
    if custom is not None:
        emitted = _PROCESS_RESULTS.once(
            task, pipeline.name, doc, results, custom, readers=max(1, len(entries))
        )
        return DocOutcome(filtered, emitted, {key: key for key in emitted})
    output_type = task.output_type
    if output_type == "loglikelihood":
        out = process_loglikelihood(results, names)
    elif output_type == "loglikelihood_rolling":
        out = process_loglikelihood_rolling(results[0], task.rolling_text(doc), names)
    elif output_type == "multiple_choice":
        out = process_multiple_choice(
            results,
            choices=[str(c) for c in task.doc_to_choice(doc)],
            gold=task.gold(doc),
            metrics=names,
        )
    else:
        return _generation(task, doc, filtered, entries)
    return DocOutcome(filtered, dict(out), {key: key for key in out})


class _OncePerDoc:
    """A task's ``process_results`` runs once per (doc, pipeline, filtered results), as in
    lm-eval, however many metrics read it: each of the pipeline's ``readers`` (metric)
    scorers asks for the doc's values, the first computes them and the others (also
    concurrent ones) reuse them; after the last reader the entry is dropped, so scoring the
    same doc again later calls the function again. Expensive functions (code execution,
    symbolic math) cost one call per doc and side-effecting ones see each doc once. Entries
    whose readers never all come are bounded (least recent dropped)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[int, str, str], _Pending] = OrderedDict()

    def once(
        self,
        task: Task,
        pipeline: str,
        doc: Mapping[str, Any],
        results: list[Any],
        fn: Callable[..., Any],
        *,
        readers: int,
    ) -> dict[str, Any]:
        if readers <= 1:
            return _checked(fn(dict(doc), results))
        key = (id(task), pipeline, _identity(doc, results))
        with self._lock:
            pending = self._entries.get(key)
            owner = pending is None or pending.task_ref() is not task
            if owner:
                pending = _Pending(task)
                self._entries[key] = pending
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
            assert pending is not None
            pending.reads += 1
            if pending.reads >= readers:
                self._entries.pop(key, None)
        if owner:
            try:
                pending.value = _checked(fn(dict(doc), results))
            except BaseException as exc:
                pending.error = exc
            finally:
                pending.done.set()
        else:
            pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return dict(pending.value)


class _Pending:
    def __init__(self, task: Task) -> None:
        self.task_ref = weakref.ref(task)
        self.done = threading.Event()
        self.value: dict[str, Any] = {}
        self.error: BaseException | None = None
        self.reads = 0


def _identity(doc: Mapping[str, Any], results: list[Any]) -> str:
    text = json.dumps([doc, results], sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _checked(values: Any) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        raise TypeError(
            f"process_results returned {type(values).__name__}; it must return a dict "
            "{metric: value}"
        )
    return dict(values)


_PROCESS_RESULTS = _OncePerDoc()


def _functions(entries: Sequence[MetricEntry]) -> dict[str, Callable[..., Any]]:
    """Metric functions that are not registered task metrics: ``!function`` metrics, and
    ``hf_evaluate: true`` metrics (computed locally, see ``hf_metrics``)."""
    functions: dict[str, Callable[..., Any]] = {}
    for entry in entries:
        if callable(entry.metric):
            functions[entry.name] = entry.metric
        elif entry.hf_evaluate:
            functions[entry.name] = hf_evaluate_metric(entry.name)
    return functions


def _generation(
    task: Task, doc: Mapping[str, Any], result: Any, entries: Sequence[MetricEntry]
) -> DocOutcome:
    gold = task.doc_to_target(doc)
    choices = [str(c) for c in task.doc_to_choice(doc)] if task.has_choices else None
    metrics = [(entry.name, dict(entry.kwargs)) for entry in entries]
    reductions = {entry.name: entry.reduction for entry in entries if entry.reduction}
    repeats = isinstance(result, list) and (len(result) != 1 or bool(reductions))
    if not repeats:
        single = result[0] if isinstance(result, list) else result
        out: MetricValues = process_generate_until(
            single,
            gold,
            metrics,
            choices=choices,
            multiple_targets=task.multiple_target,
            functions=_functions(entries),
        )
        return DocOutcome(result, dict(out), dict(out.sources))
    reference = task.generation_reference(doc)
    per_repeat = score_generation(
        reference,
        result,
        metrics,
        multiple_targets=task.multiple_target,
        functions=_functions(entries),
    )
    reduced = reduce_scores(per_repeat, reductions, reference=reference)
    sources = {key: _source_of(key, per_repeat.sources) for key in reduced}
    return DocOutcome(result, reduced, sources)


def _source_of(key: str, sources: Mapping[str, str]) -> str:
    """The metric a reduced key came from: ``pass@1(exact_match)`` → ``exact_match``."""
    if key in sources:
        return sources[key]
    if key.endswith(")") and "(" in key:
        inner = key[key.index("(") + 1 : -1]
        return sources.get(inner, inner)
    return key
