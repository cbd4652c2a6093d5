"""The task YAML as pydantic models: ``TaskConfig``, ``GroupConfig`` and their parts.

Every field of lm-evaluation-harness 0.4.13's ``TaskConfig`` is here with its default, so a
real lm-eval YAML validates unchanged. Two things are stricter than lm-eval, on purpose:

* unknown keys are errors, with a "did you mean" (lm-eval passes them to a dataclass and
  crashes with a bare ``TypeError``, or, in a metric entry, silently turns a misspelt
  ``aggregation`` into a metric kwarg);
* metric entries and filter steps are normalised as in lm-eval v0.5: known keys
  (``metric``, ``aggregation``, ``higher_is_better``, ``hf_evaluate``, ``reduction``;
  ``function``) stay fields and everything else is merged into ``kwargs``; a key that looks
  like a misspelt known key is an error instead of a kwarg.

Fields lm-eval has but assay cannot honour (images, audio, promptsource prompts) are
accepted and listed by ``TaskConfig.unsupported_features()``; building a ``Task`` from such
a config fails with that list instead of silently running a different task.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

OutputType = Literal["generate_until", "loglikelihood", "loglikelihood_rolling", "multiple_choice"]
OUTPUT_TYPES: tuple[OutputType, ...] = (
    "generate_until",
    "loglikelihood",
    "loglikelihood_rolling",
    "multiple_choice",
)
SamplerName = Literal["default", "first_n"]

DocField = str | int | list[Any] | dict[str, Any] | Callable[..., Any]
"""A ``doc_to_*`` value: a field name or Jinja template, an int, a literal list or dict, or
a callable (``!function``)."""

DEFAULT_MAX_GEN_TOKS = 256

IGNORED_KEYS = "assay.ignored_keys"
"""Validation-context key: a list there collects unknown keys (model, key, suggestion)
instead of rejecting them (``load_task_config(..., strict=False)``)."""


def _unknown_key_error(key: str, known: list[str]) -> PydanticCustomError:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return PydanticCustomError(
        "unknown_key",
        "unknown key '{key}'{hint}",
        {"key": key, "hint": hint},
    )


class _ConfigModel(BaseModel):
    """Base of the config models: unknown keys are errors that suggest the closest key."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    _source: Path | None = PrivateAttr(default=None)

    @property
    def source_path(self) -> Path | None:
        """The YAML file this config was loaded from (``None`` if built in code)."""
        return self._source

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            known = list(cls.model_fields)
            ignored = info.context.get(IGNORED_KEYS) if isinstance(info.context, dict) else None
            for key in data:
                if not isinstance(key, str):
                    raise PydanticCustomError(
                        "key_type", "keys must be strings, got {key!r}", {"key": key}
                    )
                if key not in cls.model_fields and ignored is None:
                    raise _unknown_key_error(key, known)
            if ignored is not None:
                unknown = [k for k in data if k not in cls.model_fields]
                for key in unknown:
                    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                    ignored.append((cls.__name__, key, close[0] if close else None))
                if unknown:
                    return {k: v for k, v in data.items() if k in cls.model_fields}
        return data


def _split_known(
    data: dict[str, Any], known: tuple[str, ...], *, what: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data`` split into known keys and the rest (kwargs); a misspelt known key raises."""
    fields: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}
    explicit = data.get("kwargs")
    if explicit is not None and not isinstance(explicit, dict):
        raise PydanticCustomError(
            "kwargs_type",
            "'kwargs' must be a mapping, got {kind}",
            {"kind": type(explicit).__name__},
        )
    for key, value in data.items():
        if key == "kwargs":
            continue
        if key in known:
            fields[key] = value
            continue
        if not isinstance(key, str):
            raise PydanticCustomError("key_type", "keys must be strings, got {key!r}", {"key": key})
        close = difflib.get_close_matches(key, [*known, "kwargs"], n=1, cutoff=0.8)
        if close:
            raise PydanticCustomError(
                "unknown_key",
                "unknown key '{key}' in {what} (did you mean '{close}'? other keys are passed "
                "to the {what} as kwargs)",
                {"key": key, "close": close[0], "what": what},
            )
        kwargs[key] = value
    for key, value in (explicit or {}).items():
        if key in kwargs:
            raise PydanticCustomError(
                "duplicate_kwarg",
                "'{key}' is given both inline and under 'kwargs'",
                {"key": key},
            )
        kwargs[key] = value
    fields["kwargs"] = kwargs
    return fields, kwargs


class MetricEntry(BaseModel):
    """One ``metric_list`` entry, normalised (lm-eval v0.5): extra keys become ``kwargs``.

    ``aggregation``/``higher_is_better`` of ``None`` mean "the metric's registered default"
    (lm-eval fills them in with a warning). ``hf_evaluate: true`` asks for the Hugging Face
    ``evaluate`` metric of that name (assay does not load those; see the task scorers).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    metric: str | Callable[..., Any]
    aggregation: str | Callable[..., Any] | None = None
    higher_is_better: bool | None = None
    hf_evaluate: bool = False
    reduction: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"metric": data, "kwargs": {}}
        if not isinstance(data, dict):
            return data
        known = ("metric", "aggregation", "higher_is_better", "hf_evaluate", "reduction")
        fields, _ = _split_known(data, known, what="metric")
        return fields

    @property
    def name(self) -> str:
        """The metric's name (a callable metric is named after the function, as in lm-eval)."""
        if isinstance(self.metric, str):
            return self.metric
        return str(getattr(self.metric, "__name__", repr(self.metric)))


class FilterStep(BaseModel):
    """One step of a filter pipeline: a registered filter (or callable) and its kwargs."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    function: str | Callable[..., Any]
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields, _ = _split_known(data, ("function",), what="filter")
        return fields


class ScorerRef(_ConfigModel):
    """A task's (or a filter pipeline's) ``scorer:``: a registered assay scorer and its
    params, scored on the pipeline's filtered response beside the metrics (beyond lm-eval;
    the key and its string-or-``{type, kwargs}`` shape are lm-eval v0.5's). Written as a
    name (``scorer: faithfulness``) or ``{type: NAME, params: {...}}`` (``kwargs:`` as in
    v0.5 is accepted for ``params``)."""

    type: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"type": data}
        if isinstance(data, dict) and "kwargs" in data:
            if "params" in data:
                raise ValueError("give the scorer's params as 'params' or 'kwargs', not both")
            data = {("params" if k == "kwargs" else k): v for k, v in data.items()}
        return data

    def entry(self) -> MetricEntry:
        """The scorer as a ``metric_list`` entry (assay scorers may be metrics)."""
        return MetricEntry(metric=self.type, kwargs=dict(self.params))


class FilterPipeline(_ConfigModel):
    """A named ``filter_list`` entry: steps applied in order, and (v0.5) its own metrics
    and ``scorer``."""

    name: str
    filter: list[FilterStep] = Field(default_factory=list)
    metric_list: list[MetricEntry] | None = None
    scorer: ScorerRef | None = None


class FewshotConfig(_ConfigModel):
    """``fewshot_config``: how the examples are chosen and formatted.

    ``None`` fields inherit the task's value (``split`` ← ``fewshot_split``, ``process_docs``,
    the ``doc_to_*`` fields, the delimiters and ``gen_prefix``), as lm-eval's
    ``FewshotConfig.from_dict`` does; ``TaskConfig.fewshot()`` gives the merged view.
    """

    sampler: SamplerName = "default"
    split: str | None = None
    process_docs: Callable[..., Any] | None = None
    fewshot_indices: list[int] | None = None
    samples: list[dict[str, Any]] | Callable[..., Any] | None = None
    doc_to_text: DocField | None = None
    doc_to_choice: DocField | None = None
    doc_to_target: DocField | None = None
    gen_prefix: str | None = None
    fewshot_delimiter: str | None = None
    target_delimiter: str | None = None

    @field_validator("fewshot_indices")
    @classmethod
    def _indices_not_negative(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and any(i < 0 for i in value):
            raise ValueError("fewshot_indices must be indices >= 0")
        return value


@dataclass(frozen=True)
class Pipeline:
    """A filter pipeline ready to run: its name (the result key's second half), the steps as
    ``(function, kwargs)`` and the metrics scored on its output."""

    name: str
    steps: list[tuple[str | Callable[..., Any], dict[str, Any]]]
    metric_list: list[MetricEntry] = field(default_factory=list)


_REQUIRED_DOC_TO = {
    "doc_to_text": ("generate_until", "loglikelihood", "multiple_choice"),
    "doc_to_target": OUTPUT_TYPES,
    "doc_to_choice": ("multiple_choice",),
}


class TaskConfig(_ConfigModel):
    """A benchmark task (lm-eval's ``TaskConfig``): data, prompt, few-shot and scoring."""

    # naming
    task: str | None = None
    task_alias: str | None = None
    tag: str | list[str] | None = None
    # data
    dataset_path: str | None = None
    dataset_name: str | None = None
    dataset_kwargs: dict[str, Any] | None = None
    custom_dataset: Callable[..., Any] | None = None
    training_split: str | None = None
    validation_split: str | None = None
    test_split: str | None = None
    fewshot_split: str | None = None
    process_docs: Callable[..., Any] | None = None
    # prompt
    doc_to_text: DocField | None = None
    doc_to_target: DocField | None = None
    doc_to_choice: DocField | None = None
    doc_to_image: Any = None
    doc_to_audio: Any = None
    use_prompt: str | None = None
    description: str = ""
    target_delimiter: str = " "
    fewshot_delimiter: str = "\n\n"
    gen_prefix: str | None = None
    # few-shot
    num_fewshot: int | None = Field(default=None, ge=0)
    fewshot_config: FewshotConfig | None = None
    # scoring
    output_type: OutputType = "generate_until"
    generation_kwargs: dict[str, Any] | None = None
    repeats: int = Field(default=1, ge=1)
    filter_list: list[FilterPipeline] | None = None
    metric_list: list[MetricEntry] | None = None
    scorer: ScorerRef | None = None
    process_results: Callable[..., Any] | None = None
    # other
    metadata: dict[str, Any] | None = None
    should_decontaminate: bool = False
    doc_to_decontamination_query: str | Callable[..., Any] | None = None
    unsafe_code: bool = False

    @model_validator(mode="after")
    def _check_required(self) -> TaskConfig:
        for name, output_types in _REQUIRED_DOC_TO.items():
            if self.output_type in output_types and getattr(self, name) is None:
                raise PydanticCustomError(
                    "missing_doc_to",
                    "'{name}' is required for output_type '{output_type}'",
                    {"name": name, "output_type": self.output_type},
                )
        return self

    # ----------------------------------------------------------------- normalised views
    def tags(self) -> list[str]:
        """``tag`` as a list."""
        if self.tag is None:
            return []
        return [self.tag] if isinstance(self.tag, str) else list(self.tag)

    def fewshot(self) -> FewshotConfig:
        """The few-shot settings with the task's values filled in where not overridden."""
        own = self.fewshot_config or FewshotConfig()
        inherited = {
            "split": self.fewshot_split,
            "process_docs": self.process_docs,
            "doc_to_text": self.doc_to_text,
            "doc_to_choice": self.doc_to_choice,
            "doc_to_target": self.doc_to_target,
            "gen_prefix": self.gen_prefix,
            "fewshot_delimiter": self.fewshot_delimiter,
            "target_delimiter": self.target_delimiter,
        }
        updates = {k: v for k, v in inherited.items() if getattr(own, k) is None}
        return own.model_copy(update=updates)

    def metric_entries(self) -> list[MetricEntry]:
        """``metric_list``, or the output type's default metrics when it is absent."""
        if self.metric_list is not None:
            return list(self.metric_list)
        from assay.tasks.metrics.registry import default_metrics

        return [MetricEntry(metric=name) for name in default_metrics(self.output_type)]

    def pipelines(self) -> list[Pipeline]:
        """The filter pipelines; without ``filter_list``, one pipeline ``none`` that takes
        the first response (lm-eval v0.4). A pipeline without its own ``metric_list`` gets
        a copy of the task's metrics. A ``scorer:`` (the pipeline's, else the task's) is
        scored as one more metric entry of each pipeline."""
        task_metrics = self.metric_entries()
        if self.filter_list is None:
            scored = [self.scorer.entry()] if self.scorer is not None else []
            return [Pipeline("none", [("take_first", {})], [*task_metrics, *scored])]
        pipelines = []
        for p in self.filter_list:
            scorer = p.scorer or self.scorer
            metrics = list(p.metric_list if p.metric_list is not None else task_metrics)
            pipelines.append(
                Pipeline(
                    name=p.name,
                    steps=[(step.function, dict(step.kwargs)) for step in p.filter],
                    metric_list=metrics + ([scorer.entry()] if scorer is not None else []),
                )
            )
        return pipelines

    def unsupported_features(self) -> list[str]:
        """The lm-eval features this config uses that assay does not support (empty if none)."""
        found: list[str] = []
        if self.doc_to_image is not None:
            found.append("doc_to_image: multimodal (image) tasks are not supported")
        if self.doc_to_audio is not None:
            found.append("doc_to_audio: multimodal (audio) tasks are not supported")
        if self.use_prompt is not None:
            found.append("use_prompt: promptsource templates are not supported")
        return found


class AggregateMetric(_ConfigModel):
    """A group's ``aggregate_metric_list`` entry: how a metric is combined over subtasks.

    Only ``mean`` (or a callable) is supported, as in lm-eval. ``weight_by_size`` defaults to
    ``True`` (a micro average, lm-eval ≥ 0.4.12). ``filter_list`` of ``None`` means "every
    filter key the subtasks report".
    """

    metric: str
    aggregation: Literal["mean"] | Callable[..., Any] = "mean"
    weight_by_size: bool = True
    filter_list: list[str] | None = None

    @field_validator("filter_list", mode="before")
    @classmethod
    def _one_filter(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


_DEFINING_KEYS = frozenset(
    {
        "include",
        "class",
        "dataset_path",
        "custom_dataset",
        "doc_to_text",
        "doc_to_target",
        "doc_to_choice",
        "use_prompt",
    }
)
"""Keys that make a group entry a task of its own; without any, ``- task: NAME`` plus keys
names a registered task and overrides some of its keys (lm-eval's group entries)."""


class TaskReference(_ConfigModel):
    """A group entry naming a task defined elsewhere, with keys that override its config
    (``- task: gsm8k`` / ``num_fewshot: 5``). The overrides are task keys (checked by name
    here, by value when the referenced task is loaded with them)."""

    task: str
    overrides: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "overrides" in data:
            return data
        known = sorted(TaskConfig.model_fields)
        for key in data:
            if key not in TaskConfig.model_fields:
                raise _unknown_key_error(str(key), known)
        return {
            "task": data.get("task"),
            "overrides": {k: v for k, v in data.items() if k != "task"},
        }


def _child_kind(value: Any) -> str:
    if isinstance(value, dict):
        if "group" in value:
            return "inline-group"
        if isinstance(value.get("task"), str) and not _DEFINING_KEYS.intersection(value):
            return "task-ref"
        return "inline-task"
    if isinstance(value, GroupConfig):
        return "inline-group"
    if isinstance(value, TaskConfig):
        return "inline-task"
    if isinstance(value, TaskReference):
        return "task-ref"
    return "task-name"


GroupChild = Annotated[
    Annotated[str, Tag("task-name")]
    | Annotated["GroupConfig", Tag("inline-group")]
    | Annotated[TaskConfig, Tag("inline-task")]
    | Annotated[TaskReference, Tag("task-ref")],
    Discriminator(_child_kind),
]
"""A group's child: a task/group/tag name, an inline group, an inline task config, or a
task name with overrides."""


class GroupConfig(_ConfigModel):
    """A group of tasks (lm-eval's ``GroupConfig``): children by name or inline config."""

    group: str
    group_alias: str | None = None
    task: list[GroupChild]
    aggregate_metric_list: list[AggregateMetric] | None = None
    metadata: dict[str, Any] | None = None
    task_overrides: dict[str, Any] = Field(default_factory=dict)
    """Task keys written in the group file (lm-eval 0.4.13 applies them to every child task,
    the child's own keys losing to them); see ``with_overrides``."""

    @field_validator("task", mode="before")
    @classmethod
    def _children(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | dict) else value

    @field_validator("aggregate_metric_list", mode="before")
    @classmethod
    def _one_aggregate(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    def task_names(self) -> list[str]:
        """The names of the direct children (inline tasks by their ``task``, groups by
        ``group``)."""
        names: list[str] = []
        for child in self.task:
            if isinstance(child, str):
                names.append(child)
            elif isinstance(child, TaskReference):
                names.append(child.task)
            elif isinstance(child, GroupConfig):
                names.append(child.group)
            elif child.task is not None:
                names.append(child.task)
        return names


def with_overrides(config: TaskConfig, overrides: dict[str, Any]) -> TaskConfig:
    """``config`` with a group's task keys applied over it (lm-eval 0.4.13's group-level
    task overrides), validated like any task config."""
    if not overrides:
        return config
    data = {name: getattr(config, name) for name in config.model_fields_set}
    merged = TaskConfig.model_validate({**data, **overrides})
    source = config.source_path
    if source is not None:
        merged._source = source
    return merged
