"""Scorers that combine others inside a task (beyond lm-eval): ``ensemble``,
``filter_agreement`` and ``filter_diversity``.

``ensemble`` is a weighted combination of metrics on one pipeline's output::

    metric_list:
      - metric: ensemble
        members:
          - {metric: exact_match, weight: 2, ignore_case: true}
          - {metric: content-similarity, weight: 1}

Each member (a task metric or any registered assay scorer, with its own kwargs) is scored
on the doc, mapped onto 0..1 with 1 the best end of its range (lower-is-better members
flipped), and the ensemble is the weighted mean. A member whose range is unbounded
(perplexity) cannot be put on that scale and is refused when the task is loaded. The
members' normalized values are reported next to the ensemble's.

``filter_agreement`` measures whether filter pipelines extract the same answer::

      - metric: filter_agreement
        filters: [strict-match, flexible-extract]   # default: every pipeline

1.0 when every listed pipeline's filtered response for the doc is equal, else 0.0: a
cheap check of how much a score depends on the extraction rules.

``filter_diversity`` (same ``filters:`` key) is the graded version across any number of
pipelines: ``(distinct answers - 1) / (pipelines - 1)``, 0.0 when all pipelines extract the
same answer and 1.0 when every pipeline extracts a different one. Both are reported once per
set of pipelines (``filter_diversity,strict-match+flexible-extract``), as the mean over docs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from assay.scoring.context import StepContext
from assay.scoring.registry import create_scorer
from assay.scoring.score_value import Score
from assay.scoring.scorer import Scorer
from assay.tasks.config import MetricEntry, Pipeline
from assay.tasks.metrics import TASK_METRICS
from assay.tasks.processing import COMBINED_METRICS, filter_doc, is_scorer_metric, process_doc
from assay.tasks.responses import as_json
from assay.tasks.scales import metric_scale
from assay.tasks.task import Task
from assay.types import normalize_score, range_is_bounded

ENSEMBLE = "ensemble"
FILTER_AGREEMENT = "filter_agreement"
FILTER_DIVERSITY = "filter_diversity"
CROSS_FILTER_METRICS = frozenset({FILTER_AGREEMENT, FILTER_DIVERSITY})
"""Metrics computed across a set of pipelines, reported once per set."""


class CombinedMetricError(ValueError):
    """An ``ensemble`` or ``filter_agreement`` entry that cannot be built (names the key)."""


def _doc(ctx: StepContext) -> Mapping[str, Any]:
    doc = ctx.call.metadata.get("doc")
    if not isinstance(doc, Mapping):
        raise ValueError("the item is not a task doc (its metadata has no 'doc' object)")
    return doc


def _filtered(results: Sequence[Any]) -> Any:
    return results[0] if len(results) == 1 else list(results)


class _Member:
    """One ensemble member: a task metric (computed by the pipeline's processing) or an
    assay scorer (run on the filtered response)."""

    def __init__(
        self,
        entry: MetricEntry,
        weight: float,
        scale: tuple[float, float],
        higher: bool,
        scorer: Scorer | None,
    ) -> None:
        self.name = entry.name
        self.entry = entry
        self.weight = weight
        self.scale = scale
        self.higher = higher
        self.scorer = scorer


class EnsembleStep:
    """The score step of an ``ensemble`` entry; its plain attributes are its fingerprint."""

    def __init__(self, task: Task, pipeline: Pipeline, members: list[_Member], identity: str):
        self.task = task
        self.pipeline = replace(
            pipeline, metric_list=[m.entry for m in members if m.scorer is None]
        )
        self.members = members
        self.identity = identity
        self.spec = [(m.name, m.weight, dict(m.entry.kwargs)) for m in members]

    async def __call__(self, ctx: StepContext) -> Score:
        doc = _doc(ctx)
        outcome = None
        if any(m.scorer is None for m in self.members):
            outcome = process_doc(self.task, doc, ctx.call.output, self.pipeline)
        filtered = _filtered(filter_doc(self.task, doc, ctx.call.output, self.pipeline))
        if isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
            filtered = filtered[0]
        values: dict[str, float] = {}
        total = weights = 0.0
        for member in self.members:
            if member.scorer is None:
                assert outcome is not None
                raw = float(outcome.metrics[member.name])
            else:
                result = await member.scorer.run(
                    output=filtered,
                    input=ctx.call.input,
                    ground_truth=ctx.call.ground_truth,
                    metadata=ctx.call.metadata,
                )
                if result.status != "ready" or result.score is None:
                    message = result.error.message if result.error else result.status
                    raise ValueError(f"ensemble member {member.name!r}: {message}")
                raw = result.score
            normalized = normalize_score(raw, member.scale, higher_is_better=member.higher)
            values[member.name] = normalized
            total += member.weight * normalized
            weights += member.weight
        return Score(total / weights, values=values, corpus={"filtered": as_json(filtered)})


class AgreementStep:
    """The score step of a ``filter_agreement`` (or, with ``graded``, ``filter_diversity``)
    entry."""

    def __init__(
        self, task: Task, pipelines: list[Pipeline], identity: str, *, graded: bool = False
    ) -> None:
        self.task = task
        self.pipelines = pipelines
        self.names = [p.name for p in pipelines]
        self.identity = identity
        self.graded = graded

    def __call__(self, ctx: StepContext) -> Score:
        doc = _doc(ctx)
        outputs = [
            as_json(_filtered(filter_doc(self.task, doc, ctx.call.output, p)))
            for p in self.pipelines
        ]
        corpus = {"filtered": dict(zip(self.names, outputs, strict=True))}
        distinct: list[Any] = []
        for output in outputs:
            if output not in distinct:  # JSON values: compared by equality, not hashed
                distinct.append(output)
        if self.graded:
            return Score((len(distinct) - 1) / (len(outputs) - 1), corpus=corpus)
        return Score(1.0 if len(distinct) == 1 else 0.0, corpus=corpus)


def combined_scorer(
    task: Task, pipeline: Pipeline, entry: MetricEntry, key: str, identity: str
) -> Scorer:
    """The scorer of an ``ensemble`` or ``filter_agreement`` metric entry."""
    if entry.name == ENSEMBLE:
        step: Any = EnsembleStep(task, pipeline, _members(entry), identity)
        description = "weighted mean of normalized member scores: " + ", ".join(
            f"{m.name}×{m.weight:g}" for m in step.members
        )
    elif entry.name == FILTER_DIVERSITY:
        step = AgreementStep(task, _agreeing(task, entry), identity, graded=True)
        description = "share of distinct answers across filter pipelines: " + ", ".join(step.names)
        key = agreement_key(task, entry)
    else:
        step = AgreementStep(task, _agreeing(task, entry), identity)
        description = "whether the filter pipelines agree: " + ", ".join(step.names)
        key = agreement_key(task, entry)
    return Scorer(
        id=key,
        label=key,
        description=description,
        params={"task": task.name, "metric": entry.name, **as_json(dict(entry.kwargs))},
    ).score(step)


def _members(entry: MetricEntry) -> list[_Member]:
    raw = entry.kwargs.get("members")
    if not isinstance(raw, list) or not raw:
        raise CombinedMetricError("ensemble: 'members' must be a non-empty list of metrics")
    members: list[_Member] = []
    for index, item in enumerate(raw):
        where = f"ensemble members[{index}]"
        if not isinstance(item, Mapping) or "metric" not in item:
            raise CombinedMetricError(f"{where}: expected {{metric: NAME, weight: W, ...}}")
        options = dict(item)
        weight = options.pop("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            raise CombinedMetricError(f"{where}.weight: must be a positive number, got {weight!r}")
        member_entry = MetricEntry.model_validate(options)
        if member_entry.name in COMBINED_METRICS:
            raise CombinedMetricError(f"{where}: {member_entry.name} cannot be a member")
        if is_scorer_metric(member_entry):
            scorer = create_scorer(str(member_entry.metric), **member_entry.kwargs)
            scale, higher = scorer.score_range, scorer.higher_is_better
        else:
            registered = TASK_METRICS.find(member_entry.name)
            if registered is None:
                raise CombinedMetricError(f"{where}.metric: unknown metric {member_entry.name!r}")
            scorer, scale = None, metric_scale(member_entry.name)
            higher = (
                registered.higher_is_better
                if member_entry.higher_is_better is None
                else member_entry.higher_is_better
            )
        if not range_is_bounded(scale):
            raise CombinedMetricError(
                f"{where}: {member_entry.name} has no bounded range {scale}, so it cannot be "
                "put on the 0..1 scale of an ensemble"
            )
        members.append(_Member(member_entry, float(weight), scale, higher, scorer))
    if not math.isfinite(sum(m.weight for m in members)):
        raise CombinedMetricError("ensemble: weights must be finite")
    return members


def agreement_key(task: Task, entry: MetricEntry) -> str:
    """The result key of a cross-filter entry: one per set of pipelines
    (``filter_agreement,strict-match+flexible-extract``), however many pipelines list it."""
    return f"{entry.name},{'+'.join(p.name for p in _agreeing(task, entry))}"


def _agreeing(task: Task, entry: MetricEntry) -> list[Pipeline]:
    pipelines = {p.name: p for p in task.config.pipelines()}
    names = entry.kwargs.get("filters", list(pipelines))
    if not isinstance(names, list) or len(names) < 2:
        raise CombinedMetricError(
            f"{entry.name}: 'filters' must list at least two filter pipelines "
            f"(the task has {', '.join(pipelines)})"
        )
    unknown = [n for n in names if n not in pipelines]
    if unknown:
        raise CombinedMetricError(
            f"{entry.name}: unknown filter pipeline(s) {', '.join(map(repr, unknown))} "
            f"(the task has {', '.join(pipelines)})"
        )
    return [pipelines[n] for n in names]
