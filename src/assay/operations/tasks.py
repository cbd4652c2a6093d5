"""Benchmark task runs: a task YAML run on a model, or on recorded predictions, stored.

A task run is a normal assay run: one item per eval doc (``input`` is the prompt,
``metadata`` the doc and its id), a ``TaskTarget`` (model) or ``PredictionsTarget``
(recorded responses) and one scorer per (metric, filter pipeline). It goes through the same
runner and store as every other run, so it shows in ``runs list``, ``runs compare`` and
reports, with lm-eval's aggregates and stderr in its summary (``lm-eval:<aggregation>``).

``lmeval_results`` turns a finished run back into lm-eval's report shape: ``per_doc``
(doc, filter, filtered, metrics) and ``aggregate`` (``"metric,filter"`` and
``"metric_stderr,filter"``), aggregated from the stored per-doc values exactly as lm-eval
aggregates them. Docs whose target or scorer failed are listed under ``errors`` and left out
of the aggregates, which then say over how many docs they were computed.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.models.base import Model
from assay.runner.api import run_evals_async
from assay.runner.options import RunOptions
from assay.runner.result import RunResult
from assay.scoring.sync import run_sync
from assay.store.engine import Store, using_store
from assay.tasks.chat import ChatOptions
from assay.tasks.combined import CROSS_FILTER_METRICS, agreement_key
from assay.tasks.config import (
    GroupConfig,
    MetricEntry,
    TaskConfig,
    TaskReference,
    with_overrides,
)
from assay.tasks.errors import TaskConfigError
from assay.tasks.metrics import TASK_METRICS, aggregate_metrics
from assay.tasks.processing import COMBINED_METRICS, is_scorer_metric
from assay.tasks.responses import as_json
from assay.tasks.target import PredictionsTarget, TaskTarget
from assay.tasks.task import DocContext, Task
from assay.tasks.task_scorers import DEFAULT_BOOTSTRAP_ITERS, result_key, task_scorers
from assay.tasks.yaml_loader import load_task_config
from assay.types import Item, ItemResult

log = logging.getLogger(__name__)


class TaskRunError(ValueError):
    """A task run cannot start: bad predictions, docs or options (the message says which)."""


@dataclass
class TaskRun:
    """A finished task run: the assay run and lm-eval's view of it."""

    task: Task
    run: RunResult
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[dict[str, Any]]:
        errors: list[dict[str, Any]] = self.report.get("errors", [])
        return errors


def load_task(
    path: str | Path,
    *,
    docs: Sequence[Mapping[str, Any]] | None = None,
) -> Task:
    """The task of the YAML at ``path`` (``docs`` replace its dataset)."""
    config = load_task_config(path)
    if isinstance(config, GroupConfig):
        raise TaskConfigError(
            f"{path} is a group ({config.group}); run its tasks one by one", key="group"
        )
    return Task(config, docs=docs, base_dir=Path(path).parent)


def read_predictions(path: str | Path) -> dict[int, Any]:
    """``{doc_id: responses}`` from a JSONL file of ``{"doc_id": i, "responses": R}`` lines;
    a bad line, a duplicate doc id or a missing key fails naming the line."""
    out: dict[int, Any] = {}
    source = Path(path)
    if not source.is_file():
        raise TaskRunError(f"{path}: no such file")
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskRunError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "doc_id" not in row or "responses" not in row:
                raise TaskRunError(f'{where}: expected {{"doc_id": i, "responses": R}}')
            doc_id = row["doc_id"]
            if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
                raise TaskRunError(f"{where}: doc_id must be a non-negative integer")
            if doc_id in out:
                raise TaskRunError(f"{where}: doc_id {doc_id} appears twice")
            out[doc_id] = row["responses"]
    return out


def task_items(
    task: Task,
    *,
    limit: int | None = None,
    num_fewshot: int | None = None,
    prompts_needed: bool = True,
    chat: ChatOptions | None = None,
) -> list[Item]:
    """One item per eval doc: the prompt as input, the doc (and its id) in metadata.

    Scoring recorded predictions does not need the prompts (``prompts_needed=False``):
    when the few-shot examples cannot be read there (a hub dataset with ``--docs``), the
    items show the zero-shot prompt and say so in their metadata, instead of failing."""
    items: list[Item] = []
    generation = task.output_type == "generate_until"
    if chat is not None and chat.apply_chat_template and not generation:
        raise TaskRunError(
            f"task {task.name} is {task.output_type}: a chat template applies to "
            "generate_until tasks (a chat model receives the messages); scoring "
            "continuations needs the model's own template rendered to text"
        )
    note: str | None = None
    if task.output_type == "loglikelihood_rolling":  # no prompt: the text itself is scored
        contexts = [
            DocContext(i, doc, task.rolling_text(doc))
            for i, doc in enumerate(task.eval_docs(limit))
        ]
    else:
        found = _contexts(task, limit, num_fewshot, prompts_needed, chat)
        note = _ZERO_SHOT_NOTE if found is None else None
        contexts = (
            found if found is not None else task.contexts(num_fewshot=0, limit=limit, chat=chat)
        )
    for context in contexts:
        target = (
            task.generation_reference(context.doc)
            if generation
            else task.doc_to_target(context.doc)
        )
        items.append(
            Item(
                id=str(context.doc_id),
                input=context.context,
                expected_output=as_json(target),
                metadata={"doc_id": context.doc_id, "doc": as_json(dict(context.doc))}
                | ({"prompt_note": note} if note else {}),
            )
        )
    return items


_ZERO_SHOT_NOTE = "zero-shot prompt shown: the few-shot examples could not be read"


def _contexts(
    task: Task,
    limit: int | None,
    num_fewshot: int | None,
    prompts_needed: bool,
    chat: ChatOptions | None,
) -> list[DocContext] | None:
    """The prompts, or ``None`` when only the few-shot pool is missing and the prompts are
    not needed (recorded predictions)."""
    try:
        return task.contexts(num_fewshot=num_fewshot, limit=limit, chat=chat)
    except TaskConfigError as exc:
        if prompts_needed or task.resolve_num_fewshot(num_fewshot) == 0:
            raise
        log.warning("recorded predictions: prompts shown zero-shot (%s)", exc)
        return None


async def run_task_async(
    task: Task,
    *,
    model: str | Model | None = None,
    predictions: Mapping[int, Any] | None = None,
    predictions_source: str = "",
    limit: int | None = None,
    num_fewshot: int | None = None,
    bootstrap_iters: int = DEFAULT_BOOTSTRAP_ITERS,
    stored: bool = True,
    store: Store | None = None,
    base_url: str | None = None,
    chat: ChatOptions | None = None,
    options: RunOptions | None = None,
    **option_values: Any,
) -> TaskRun:
    """Run ``task`` on ``model`` or score recorded ``predictions`` (exactly one of them).

    ``chat`` holds lm-eval's ``--apply_chat_template``/``--fewshot_as_multiturn``/
    ``--system_instruction`` (``assay.tasks.chat``): with a chat template the items' inputs
    are the chat messages the model receives."""
    if (model is None) == (predictions is None):
        raise TaskRunError("give a model or predictions (exactly one)")
    run_options = RunOptions.of(options, **option_values)
    if run_options.backend == "ray" and not stored:
        raise TaskRunError(
            "backend 'ray': its workers store the results, so stored=False cannot be used"
        )
    items = task_items(
        task,
        limit=limit,
        num_fewshot=num_fewshot,
        prompts_needed=predictions is None,
        chat=chat,
    )
    target: TaskTarget | PredictionsTarget
    if predictions is not None:
        target = PredictionsTarget(task, predictions, source=predictions_source)
        try:
            target.check({int(item.metadata["doc_id"]): item.metadata["doc"] for item in items})
        except (KeyError, ValueError) as exc:
            raise TaskRunError(str(exc).strip('"')) from None
    else:
        assert model is not None
        target = TaskTarget(task, model, base_url=base_url)
    scorers = task_scorers(task, bootstrap_iters=bootstrap_iters)
    if run_options.name is None:
        run_options = RunOptions.of(run_options, name=f"task {task.name}")
    if stored:
        from assay.operations.stored_runs import run_stored_async

        with using_store(store) as db:
            run = await run_stored_async(items, target, scorers, store=db, options=run_options)
            results = list(db.runs.results(run.id))
    else:
        run = await run_evals_async(items, target, scorers, options=run_options)
        results = run.results
    report = lmeval_results(task, results, bootstrap_iters=bootstrap_iters)
    return TaskRun(task=task, run=run, report=report)


def run_task(task: Task, **kwargs: Any) -> TaskRun:
    """``run_task_async`` for synchronous code."""
    return run_sync(lambda: run_task_async(task, **kwargs))


# ----------------------------------------------------------------- lm-eval's report


def _key_aggregations(config: TaskConfig) -> dict[str, Any]:
    aggregations: dict[str, Any] = {}
    for pipeline in config.pipelines():
        for entry in pipeline.metric_list:
            if is_scorer_metric(entry) or entry.name in COMBINED_METRICS:
                aggregations.setdefault(entry.name, "mean")
            elif entry.aggregation is not None:
                aggregations.setdefault(entry.name, entry.aggregation)
    return aggregations


def lmeval_results(
    task: Task,
    results: Iterable[ItemResult],
    *,
    bootstrap_iters: int | None = DEFAULT_BOOTSTRAP_ITERS,
) -> dict[str, Any]:
    """lm-eval's ``per_doc`` and ``aggregate`` for a task run's results (first repeat)."""
    pipelines = task.config.pipelines()
    entries: dict[str, tuple[MetricEntry, str]] = {}
    for p in pipelines:
        for entry in p.metric_list:
            key = result_key(entry.name, p.name)
            if entry.name in CROSS_FILTER_METRICS:
                key = agreement_key(task, entry)
            entries.setdefault(key, (entry, key.partition(",")[2]))
    per_doc: dict[tuple[int, str], dict[str, Any]] = {}
    errors: list[dict[str, Any]] = []
    for result in sorted(results, key=lambda r: (r.position, r.repeat)):
        if result.repeat != 0:
            continue
        doc_id = int(result.item_id)
        if result.error is not None:
            errors.append({"doc": doc_id, "error": result.error.message})
            continue
        for key, score in result.scores.items():
            if key not in entries:
                continue
            entry, pipeline = entries[key]
            row = per_doc.setdefault(
                (doc_id, pipeline),
                {"doc": doc_id, "filter": pipeline, "filtered": None, "metrics": {}},
            )
            if score.status != "ready":
                message = score.error.message if score.error else score.status
                errors.append(
                    {"doc": doc_id, "filter": pipeline, "metric": entry.name, "error": message}
                )
                continue
            corpus = score.corpus
            if isinstance(corpus, Mapping) and "metrics" in corpus:
                row["filtered"] = corpus.get("filtered")
                row["metrics"].update(corpus["metrics"] or {entry.name: corpus.get("value")})
            else:
                row["metrics"][entry.name] = score.score
    order = {p.name: i for i, p in enumerate(pipelines)}
    rows = sorted(per_doc.values(), key=lambda r: (order.get(r["filter"], len(order)), r["doc"]))
    raw: dict[tuple[str, str], list[Any]] = {}
    for row in rows:
        for metric, value in row["metrics"].items():
            raw.setdefault((metric, row["filter"]), []).append(value)
    aggregate = aggregate_metrics(
        raw, _key_aggregations(task.config), bootstrap_iters=bootstrap_iters
    )
    docs = aggregate.pop("sample_len", 0)
    aggregate = {k: _finite_or_none(v) for k, v in aggregate.items()}
    higher = {}
    for entry, _ in entries.values():
        registered = TASK_METRICS.find(entry.name)
        default = registered.higher_is_better if registered is not None else True
        higher[entry.name] = default if entry.higher_is_better is None else entry.higher_is_better
    return {
        "task": task.name,
        "per_doc": rows,
        "aggregate": aggregate,
        "higher_is_better": higher,
        "n_docs": docs,
        "errors": errors,
    }


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ----------------------------------------------------------------- groups


@dataclass
class GroupRun:
    """A group run: each leaf task's run, and the group's aggregates over them."""

    group: str
    tasks: dict[str, TaskRun]
    aggregate: dict[str, Any]

    @property
    def report(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "aggregate": self.aggregate,
            "tasks": {name: run.report for name, run in self.tasks.items()},
        }


def group_leaves(path: str | Path) -> tuple[GroupConfig, dict[str, Task]]:
    """The group at ``path`` and its leaf tasks: children by task name or tag (looked up
    among the YAMLs under the group file's directory), inline task configs, nested groups."""
    from assay.tasks.yaml_loader import discover_tasks

    source = Path(path)
    config = load_task_config(source)
    if not isinstance(config, GroupConfig):
        raise TaskConfigError(f"{path} is a task, not a group", key="group")
    entries = [e for e in discover_tasks(source.parent) if e.error is None]
    leaves: dict[str, Task] = {}

    def add(
        group: GroupConfig,
        where: Path,
        trail: tuple[str, ...],
        inherited: dict[str, Any] | None = None,
    ) -> None:
        overrides = {**group.task_overrides, **(inherited or {})}  # the caller's win, as lm-eval
        if group.group in trail:
            raise TaskConfigError(f"group {group.group!r} contains itself", key="task")
        for child in group.task:
            if isinstance(child, GroupConfig):
                add(child, where, (*trail, group.group), overrides)
            elif isinstance(child, TaskConfig):
                leaves[child.task or f"{group.group}[{len(leaves)}]"] = Task(
                    with_overrides(child, overrides), base_dir=where.parent
                )
            else:
                name = child.task if isinstance(child, TaskReference) else child
                own = child.overrides if isinstance(child, TaskReference) else {}
                found = [e for e in entries if e.name == name or name in e.tags]
                if not found:
                    raise TaskConfigError(
                        f"group {group.group!r}: no task or tag {name!r} under {source.parent}",
                        key="task",
                    )
                for entry in found:
                    loaded = load_task_config(entry.file)
                    if isinstance(loaded, GroupConfig):
                        add(loaded, entry.file, (*trail, group.group), {**overrides, **own})
                    else:
                        leaves[loaded.task or str(entry.file)] = Task(
                            with_overrides(loaded, {**overrides, **own}),
                            base_dir=entry.file.parent,
                        )

    add(config, source, ())
    return config, leaves


def group_aggregates(
    config: GroupConfig, reports: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """lm-eval's group numbers: each ``aggregate_metric_list`` entry over the leaves'
    aggregates (micro average by size, or the plain mean of the leaf means)."""
    from assay.tasks.metrics import aggregate_group

    leaf_results = {
        name: {**report["aggregate"], "sample_len": report.get("n_docs", 0)}
        for name, report in reports.items()
    }
    out: dict[str, Any] = {}
    for entry in config.aggregate_metric_list or []:
        filters = entry.filter_list or sorted(
            {
                key.partition(",")[2]
                for result in leaf_results.values()
                for key in result
                if key.startswith(f"{entry.metric},")
            }
        )
        for filter_key in filters:
            key = f"{entry.metric},{filter_key}"
            found = aggregate_group(leaf_results, key, weight_by_size=entry.weight_by_size)
            if found is not None:
                out[key] = found.value
                out[f"{entry.metric}_stderr,{filter_key}"] = found.stderr
    return out


async def run_group_async(
    path: str | Path, *, model: str | Model, limit: int | None = None, **kwargs: Any
) -> GroupRun:
    """Run every leaf task of the group at ``path`` on ``model`` (one stored run each) and
    aggregate them as lm-eval does."""
    config, leaves = group_leaves(path)
    runs: dict[str, TaskRun] = {}
    for name, task in leaves.items():
        runs[name] = await run_task_async(task, model=model, limit=limit, **kwargs)
    aggregate = group_aggregates(config, {name: run.report for name, run in runs.items()})
    return GroupRun(group=config.group, tasks=runs, aggregate=aggregate)


def run_group(path: str | Path, **kwargs: Any) -> GroupRun:
    """``run_group_async`` for synchronous code."""
    return run_sync(lambda: run_group_async(path, **kwargs))


# ----------------------------------------------------------------- a task file, as the CLI runs it


def run_task_file(
    path: str | Path,
    *,
    model: str | Model | None = None,
    predictions: str | Path | None = None,
    docs: str | Path | None = None,
    limit: int | None = None,
    num_fewshot: int | None = None,
    bootstrap_iters: int = DEFAULT_BOOTSTRAP_ITERS,
    stored: bool = True,
    base_url: str | None = None,
    chat: ChatOptions | None = None,
    options: RunOptions | None = None,
    **option_values: Any,
) -> TaskRun | GroupRun:
    """The YAML at ``path`` run as ``assay tasks run`` runs it: a group runs each leaf task
    on ``model`` (``GroupRun``); a task runs on ``model`` or scores the recorded
    ``predictions`` file (exactly one), on its own dataset or the ``docs`` file.

    Why here and not in the CLI: deciding what a file is and which inputs it accepts is the
    operation; the command only parses flags and prints. Bad input raises
    ``TaskRunError``/``TaskConfigError`` (or ``OSError`` for a file that cannot be read),
    each naming what is wrong."""
    if (model is None) == (predictions is None):
        raise TaskRunError("give --model or --predictions (exactly one)")
    config = load_task_config(path)
    if isinstance(config, GroupConfig):
        if docs is not None or predictions is not None:
            raise TaskRunError(
                "a group runs its tasks on a model: --docs/--predictions are per task"
            )
        assert model is not None
        return run_group(
            path,
            model=model,
            limit=limit,
            num_fewshot=num_fewshot,
            base_url=base_url,
            bootstrap_iters=bootstrap_iters,
            stored=stored,
            chat=chat,
            options=options,
            **option_values,
        )
    from assay.tasks.docs import load_docs_file

    task = Task(
        config,
        docs=load_docs_file(docs) if docs is not None else None,
        base_dir=Path(path).parent,
    )
    return run_task(
        task,
        model=model,
        predictions=read_predictions(predictions) if predictions is not None else None,
        predictions_source=str(predictions) if predictions is not None else "",
        limit=limit,
        num_fewshot=num_fewshot,
        bootstrap_iters=bootstrap_iters,
        stored=stored,
        base_url=base_url,
        chat=chat,
        options=options,
        **option_values,
    )
