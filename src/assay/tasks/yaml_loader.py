"""Load task and group YAMLs: ``!function``, ``include:`` and errors that point at the key.

``load_task_config(path)`` reads a YAML the way lm-eval 0.4.13 does and validates it into a
``TaskConfig`` or ``GroupConfig``:

* ``!function module.fn`` imports ``fn`` from ``module.py`` next to the YAML that wrote the
  tag (or from an importable module), also for filter classes;
* ``include: base.yaml`` (or a list) inherits a base config, resolved relative to the
  including file; later includes win over earlier ones, the file's own keys win over all
  (a shallow merge, as in lm-eval); includes nest, and a cycle is an error naming the chain;
* every problem is reported with the file the key came from and its key path in the merged
  config (``filter_list[1].filter[0].function``): YAML syntax, unknown keys (with "did you
  mean"), wrong types, bad ``!function``, unknown filter, metric and aggregation names.

``discover_tasks(directory)`` lists the tasks and groups under a directory for ``assay
tasks list``: templates without ``task:`` are skipped, broken files are listed with their
error, and ``!function`` code is not executed.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from assay.tasks.config import IGNORED_KEYS, GroupConfig, MetricEntry, TaskConfig
from assay.tasks.errors import ConfigIssue, TaskConfigError, key_path
from assay.tasks.functions import FunctionRef, FunctionRefError

log = logging.getLogger(__name__)

YAML_SUFFIXES = (".yaml", ".yml")
_TASK_ONLY_KEYS = (
    frozenset(TaskConfig.model_fields) - frozenset(GroupConfig.model_fields) - {"task_overrides"}
)

AnyConfig = TaskConfig | GroupConfig


# ---------------------------------------------------------------------------- reading YAML
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> Any:
    """Parse one file; ``!function`` becomes a ``FunctionRef`` bound to this file."""

    class Loader(_BaseLoader):  # type: ignore[misc]
        pass

    def function_tag(loader: Any, node: yaml.Node) -> FunctionRef:
        spec = loader.construct_scalar(node)
        return FunctionRef(str(spec), file=path, line=node.start_mark.line + 1)

    def mapping(loader: Any, node: yaml.MappingNode) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            if isinstance(key, str) and key in seen:
                # lm-eval's loader keeps the last value silently, and real task YAMLs
                # rely on it (several dozen in 0.4.13): keep it, but say so.
                log.warning(
                    "%s: line %d: key '%s' appears twice in the same mapping; the last "
                    "value is used (as lm-eval does)",
                    path,
                    key_node.start_mark.line + 1,
                    key,
                )
            seen.add(key if isinstance(key, str) else id(key_node))
        loader.flatten_mapping(node)
        return dict(loader.construct_pairs(node))

    Loader.add_constructor("!function", function_tag)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskConfigError("no such file", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskConfigError(f"cannot read: {exc}", file=path) from None
    try:
        return yaml.load(text, Loader=Loader)  # a SafeLoader plus !function
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise TaskConfigError(f"{where}invalid YAML: {problem}", file=path) from None
    except yaml.YAMLError as exc:
        raise TaskConfigError(f"invalid YAML: {exc}", file=path) from None


@dataclass
class RawConfig:
    """A YAML with its includes merged: the data, and the file each top-level key came from."""

    path: Path
    data: dict[str, Any]
    origins: dict[str, Path] = field(default_factory=dict)

    def file_of(self, key: str | None) -> Path:
        return self.origins.get(key, self.path) if key is not None else self.path


def read_config(path: str | Path) -> RawConfig:
    """The merged raw mapping of a YAML file (includes resolved, nothing validated)."""
    return _read_merged(Path(path).expanduser().absolute(), ())


def _read_merged(path: Path, chain: tuple[Path, ...]) -> RawConfig:
    resolved = path.resolve()
    if resolved in chain:
        names = " -> ".join(str(p) for p in (*chain, resolved))
        raise TaskConfigError(f"include cycle: {names}", key="include", file=chain[-1])
    data = _read_yaml(path)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise TaskConfigError(
            f"a task config must be a mapping of keys, this file is {kind}", file=path
        )
    includes = data.pop("include", None)
    merged: dict[str, Any] = {}
    origins: dict[str, Path] = {}
    if includes is not None:
        entries = includes if isinstance(includes, list) else [includes]
        for index, entry in enumerate(entries):
            key = "include" if not isinstance(includes, list) else f"include[{index}]"
            if not isinstance(entry, str) or not entry.strip():
                raise TaskConfigError(
                    f"an include must be a file path, got {entry!r}", key=key, file=path
                )
            target = Path(entry).expanduser()
            if not target.is_absolute():
                target = resolved.parent / target  # lm-eval follows symlinks first
            if not target.is_file():
                raise TaskConfigError(f"included file not found: {target}", key=key, file=path)
            base = _read_merged(target, (*chain, resolved))
            base.data.pop("task_list", None)  # lm-eval: a task_list is not inherited
            merged.update(base.data)
            origins.update({k: base.file_of(k) for k in base.data})
    merged.update(data)
    origins.update({k: path for k in data})
    return RawConfig(path=path, data=merged, origins=origins)


# ---------------------------------------------------------------------------- validating
def load_task_config(
    path: str | Path, *, resolve_functions: bool = True, strict: bool = True
) -> AnyConfig:
    """Load a task or group YAML; raises ``TaskConfigError`` listing every problem found.

    With ``resolve_functions`` (the default) every ``!function`` is imported now, so a wrong
    reference is an error at load time; otherwise references resolve on first call. With
    ``strict=False`` unknown keys are dropped with a logged warning instead of an error.
    """
    raw = read_config(path)
    return config_from_raw(raw, resolve_functions=resolve_functions, strict=strict)


def config_from_raw(
    raw: RawConfig, *, resolve_functions: bool = True, strict: bool = True
) -> AnyConfig:
    """Validate a merged raw config into a ``TaskConfig`` or ``GroupConfig``."""
    data = raw.data
    if "class" in data:
        raise TaskConfigError(
            "a Python task class (`class: !function ...`) is not supported: assay runs tasks "
            "defined by their YAML keys",
            key="class",
            file=raw.file_of("class"),
        )
    is_group = "group" in data
    if is_group and isinstance(data.get("task"), list):
        data = {**data, "task": _inline_includes(data["task"], raw.path, ())}
    if is_group:
        # lm-eval 0.4.13: task keys in a group file override its child tasks' keys
        overrides = {k: data[k] for k in data if k in _TASK_ONLY_KEYS and k != "task"}
        if overrides:
            data = {k: v for k, v in data.items() if k not in overrides}
            data["task_overrides"] = overrides
    elif "task" not in data:
        raise TaskConfigError(
            "no 'task' (or 'group') key: this looks like a template meant to be included",
            key="task",
            file=raw.path,
        )
    issues: list[ConfigIssue] = []
    if resolve_functions:
        _resolve_refs(data, (), raw, issues)
        if issues:
            raise TaskConfigError(issues=issues)
    model: type[TaskConfig] | type[GroupConfig] = GroupConfig if is_group else TaskConfig
    ignored: list[tuple[str, str, str | None]] = []
    context = None if strict else {IGNORED_KEYS: ignored}
    try:
        config = model.model_validate(data, context=context)
    except ValidationError as exc:
        raise TaskConfigError(issues=_issues_from(exc, raw)) from None
    for where, key, close in ignored:
        hint = f" (did you mean '{close}'?)" if close else ""
        log.warning("%s: unknown key '%s' in %s ignored%s", raw.path, key, where, hint)
    issues.extend(_check_names(config, raw, resolve_functions=resolve_functions))
    if issues:
        raise TaskConfigError(issues=issues)
    _set_source(config, raw.path)
    return config


def _inline_includes(children: list[Any], path: Path, chain: tuple[Path, ...]) -> list[Any]:
    """Group entries with their own ``include:`` merged (relative to the group file, the
    entry's keys winning), also in nested inline groups, as lm-eval does."""
    out: list[Any] = []
    for child in children:
        if isinstance(child, dict) and isinstance(child.get("task"), list):
            child = {**child, "task": _inline_includes(child["task"], path, chain)}
        if isinstance(child, dict) and "include" in child and "group" not in child:
            inline = {k: v for k, v in child.items() if k != "include"}
            base = _read_merged(_include_target(child["include"], path), (*chain, path.resolve()))
            child = {**base.data, **inline}
        out.append(child)
    return out


def _include_target(entry: Any, path: Path) -> Path:
    if not isinstance(entry, str) or not entry.strip():
        raise TaskConfigError(
            f"an include must be a file path, got {entry!r}", key="task", file=path
        )
    target = Path(entry).expanduser()
    if not target.is_absolute():
        target = path.resolve().parent / target
    if not target.is_file():
        raise TaskConfigError(f"included file not found: {target}", key="task", file=path)
    return target


def _set_source(config: AnyConfig, path: Path) -> None:
    config._source = path
    if isinstance(config, GroupConfig):
        for child in config.task:
            if isinstance(child, TaskConfig | GroupConfig):
                _set_source(child, path)


def _resolve_refs(
    value: Any, loc: tuple[str | int, ...], raw: RawConfig, issues: list[ConfigIssue]
) -> Any:
    """Replace every ``FunctionRef`` in place by its callable, collecting failures."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, FunctionRef):
                value[key] = _resolved(item, (*loc, key), raw, issues)
            else:
                _resolve_refs(item, (*loc, key), raw, issues)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, FunctionRef):
                value[index] = _resolved(item, (*loc, index), raw, issues)
            else:
                _resolve_refs(item, (*loc, index), raw, issues)
    return value


def _resolved(
    ref: FunctionRef, loc: tuple[str | int, ...], raw: RawConfig, issues: list[ConfigIssue]
) -> Any:
    try:
        return ref.resolve()
    except FunctionRefError as exc:
        line = f"line {ref.line}: " if ref.line else ""
        issues.append(ConfigIssue(f"{line}{exc}", key=key_path(loc), file=ref.file))
        return ref


def _issues_from(exc: ValidationError, raw: RawConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    seen: set[tuple[str, str]] = set()
    for error in exc.errors(include_url=False):
        loc = _data_loc(raw.data, error["loc"])
        if error["type"] == "unknown_key" and "key" in error.get("ctx", {}):
            unknown = error["ctx"]["key"]
            if not isinstance(_walk(raw.data, loc), dict) or unknown in _walk(raw.data, loc):
                loc = (*loc, unknown)
        path = key_path(loc)
        message = _message(error)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        top = loc[0] if loc and isinstance(loc[0], str) else None
        issues.append(ConfigIssue(message, key=path or None, file=raw.file_of(top)))
    return issues


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    message = str(error["msg"])
    if kind in ("value_error", "assertion_error"):
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    given = error.get("input")
    if kind not in ("unknown_key", "missing_doc_to") and not isinstance(given, dict | list):
        message += f" (got {given!r})"
    return message


def _data_loc(data: Any, loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """The part of a pydantic error location that addresses the raw data (dropping union
    member tags such as ``str`` or ``function-plain[...]``)."""
    out: list[str | int] = []
    current = data
    for part in loc:
        in_dict = isinstance(current, dict) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_dict or in_list:
            out.append(part)
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and not _is_tag(part):
            out.append(part)  # a missing key: name it
            current = None
    return tuple(out)


def _is_tag(part: str) -> bool:
    return (
        part in ("str", "int", "bool", "dict", "list", "task-name", "inline-task", "inline-group")
        or part == "task-ref"
        or "[" in part
        or part.startswith(("function-", "callable", "list[", "dict["))
    )


def _walk(data: Any, loc: tuple[str | int, ...]) -> Any:
    current = data
    for part in loc:
        current = current[part]
    return current


# ---------------------------------------------------------------------------- names
def _check_names(
    config: AnyConfig, raw: RawConfig, *, resolve_functions: bool
) -> list[ConfigIssue]:
    """Filter, metric and aggregation names that no registry knows, located by key path."""
    if isinstance(config, GroupConfig):
        issues: list[ConfigIssue] = []
        children = raw.data["task"] if isinstance(raw.data["task"], list) else [raw.data["task"]]
        for index, child in enumerate(config.task):
            if isinstance(child, TaskConfig):
                sub = RawConfig(raw.path, children[index], {})
                for issue in _check_task_names(child, sub, resolve_functions):
                    key = key_path(("task", index)) + ("." + issue.key if issue.key else "")
                    issues.append(ConfigIssue(issue.message, key=key, file=raw.file_of("task")))
        return issues
    return _check_task_names(config, raw, resolve_functions)


def _check_task_names(
    config: TaskConfig, raw: RawConfig, resolve_functions: bool
) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []

    def add(loc: tuple[str | int, ...], message: str) -> None:
        top = loc[0] if isinstance(loc[0], str) else None
        issues.append(ConfigIssue(message, key=key_path(loc), file=raw.file_of(top)))

    for i, pipeline in enumerate(config.filter_list or []):
        for j, step in enumerate(pipeline.filter):
            where: tuple[str | int, ...] = ("filter_list", i, "filter", j)
            if isinstance(step.function, FunctionRef) and not resolve_functions:
                continue
            problem = _filter_problem(step.function, step.kwargs)
            if problem is not None:
                message, kwarg = problem
                raw_step = raw.data["filter_list"][i]["filter"][j]
                if kwarg is None:
                    add((*where, "function"), message)
                elif isinstance(raw_step.get("kwargs"), dict) and kwarg in raw_step["kwargs"]:
                    add((*where, "kwargs", kwarg), message)
                elif kwarg in raw_step:
                    add((*where, kwarg), message)
                else:
                    add(where, message)
        for k, entry in enumerate(pipeline.metric_list or []):
            for sub, message in _metric_problems(entry, config):
                add(("filter_list", i, "metric_list", k, sub), message)
    for k, entry in enumerate(config.metric_list or []):
        for sub, message in _metric_problems(entry, config):
            add(("metric_list", k, sub), message)
    scorers = [(("scorer",), config.scorer)] + [
        (("filter_list", i, "scorer"), p.scorer) for i, p in enumerate(config.filter_list or [])
    ]
    for where, ref in scorers:
        if ref is not None and not _is_registered_scorer(ref.type):
            from assay.scoring.registry import SCORER_TYPES

            add((*where, "type"), _unknown("scorer", ref.type, SCORER_TYPES.suggest(ref.type)))
    return issues


def _filter_problem(function: Any, kwargs: dict[str, Any]) -> tuple[str, str | None] | None:
    """``(message, offending kwarg)`` if the step does not build, else ``None``."""
    validate = _filters_validator()
    if validate is None:
        # The filter registry is not importable: only the step's shape was validated.
        return None
    try:
        validate(function, kwargs)
    except ValueError as exc:
        return str(exc), getattr(exc, "kwarg", None)
    return None


def _filters_validator() -> Callable[[Any, dict[str, Any]], None] | None:
    """``validate_filter_step`` of the filter registry (``assay.tasks.filters``)."""
    for name in ("assay.tasks.filters", "assay.tasks.filters.registry"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        validate = getattr(module, "validate_filter_step", None)
        if validate is not None:
            result: Callable[[Any, dict[str, Any]], None] = validate
            return result
    log.warning("assay.tasks.filters is not available: filter names are not checked")
    return None


def _metric_problems(entry: MetricEntry, config: TaskConfig) -> Iterator[tuple[str, str]]:
    from assay.tasks.metrics.registry import TASK_AGGREGATIONS, TASK_METRICS

    metric = entry.metric
    # With process_results the metric functions are never called (lm-eval), so a metric
    # is any name process_results returns; hf_evaluate metrics are resolved by the scorers.
    checked = isinstance(metric, str) and not entry.hf_evaluate and config.process_results is None
    if checked and metric not in TASK_METRICS and not _is_scorer_type(str(metric)):
        yield "metric", _unknown("metric", str(metric), TASK_METRICS.suggest(str(metric)))
    aggregation = entry.aggregation
    if isinstance(aggregation, str) and aggregation not in TASK_AGGREGATIONS:
        yield (
            "aggregation",
            _unknown("aggregation", aggregation, TASK_AGGREGATIONS.suggest(aggregation)),
        )
    if entry.reduction is not None:
        from assay.tasks.metrics import REDUCTIONS

        if entry.reduction not in REDUCTIONS:
            yield (
                "reduction",
                _unknown("reduction", entry.reduction, REDUCTIONS.suggest(entry.reduction)),
            )


def _is_scorer_type(name: str) -> bool:
    """Any registered assay scorer may be a task metric (beyond lm-eval)."""
    from assay.scoring.registry import SCORER_TYPES
    from assay.tasks.processing import COMBINED_METRICS

    return name in SCORER_TYPES or name in COMBINED_METRICS


def _is_registered_scorer(name: str) -> bool:
    from assay.scoring.registry import SCORER_TYPES

    return name in SCORER_TYPES


def _unknown(kind: str, name: str, suggestions: list[str]) -> str:
    hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
    return f"unknown {kind} '{name}'{hint}"


# ---------------------------------------------------------------------------- discovery
@dataclass(frozen=True)
class TaskEntry:
    """One row of ``assay tasks list``: a task or group found in a directory.

    ``groups`` names the groups (found in the same directory) that list this task, directly
    or through one of its tags. A file that does not load has ``error`` set and whatever
    could be read (``name`` may be ``None``).
    """

    name: str | None
    file: Path
    kind: str  # "task" or "group"
    output_type: str | None = None
    tags: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    error: str | None = None
    unsupported: tuple[str, ...] = ()


def discover_tasks(directory: str | Path) -> list[TaskEntry]:
    """Every task and group YAML under ``directory`` (recursively), sorted by name.

    Files without ``task:``/``group:`` are templates and are skipped; a file that fails to
    load is listed with its error. No ``!function`` code is executed.
    """
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise TaskConfigError("not a directory", file=root)
    found: list[TaskEntry] = []
    members: dict[str, set[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file()):
        if any(part in ("__pycache__", ".ipynb_checkpoints") for part in path.parts):
            continue
        entry = _discover_one(path)
        if entry is None:
            continue
        found.append(entry[0])
        if entry[1] is not None:
            for child in entry[1].task_names():
                members.setdefault(child, set()).add(entry[1].group)
    result = []
    for item in found:
        groups: set[str] = set()
        if item.name is not None:
            groups |= members.get(item.name, set())
        for tag in item.tags:
            groups |= members.get(tag, set())
        result.append(
            TaskEntry(
                name=item.name,
                file=item.file,
                kind=item.kind,
                output_type=item.output_type,
                tags=item.tags,
                groups=tuple(sorted(groups)),
                error=item.error,
                unsupported=item.unsupported,
            )
        )
    return sorted(result, key=lambda e: (e.name is None, e.name or "", str(e.file)))


def _discover_one(path: Path) -> tuple[TaskEntry, GroupConfig | None] | None:
    try:
        raw = read_config(path)
    except TaskConfigError as exc:
        return TaskEntry(name=None, file=path, kind="task", error=str(exc)), None
    data = raw.data
    if "task" not in data and "group" not in data:
        return None
    kind = "group" if "group" in data else "task"
    name = data.get(kind)
    name = name if isinstance(name, str) else None
    try:
        config = config_from_raw(raw, resolve_functions=False)
    except TaskConfigError as exc:
        return TaskEntry(name=name, file=path, kind=kind, error=str(exc)), None
    if isinstance(config, GroupConfig):
        return TaskEntry(name=config.group, file=path, kind="group"), config
    return (
        TaskEntry(
            name=config.task,
            file=path,
            kind="task",
            output_type=config.output_type,
            tags=tuple(config.tags()),
            unsupported=tuple(config.unsupported_features()),
        ),
        None,
    )
