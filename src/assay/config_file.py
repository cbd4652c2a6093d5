"""The one reader of assay's YAML configs: run, calibration, optimization, judge optimization.

Every config file goes through the same three steps, so they fail alike:

1. ``read_config_file``: safe YAML (no Python tags), a mapping at the top level, ``${VAR}``
   taken from the environment; an unreadable file, invalid YAML, a list or a missing
   variable is one line naming the file (``cannot read run.yaml: No such file``);
2. ``anchor_paths``: a relative data/report path means "next to the config file";
3. ``validate_config``: the pydantic model validates, and its first error becomes one line
   naming the source and the key in the user's words (``cal.yaml: unknown key 'treshold';
   did you mean 'threshold'? (allowed keys: ...)``, ``missing key 'kind'``,
   ``key 'budget.max_cost_usd': Input should be greater than 0``).

Each config keeps its own error type (``RunConfigError``, ``CalibrationConfigError``,
``OptimizeConfigError``), all ``ConfigError``s, so callers catch one or all.

``${VAR}``: a value taken from the environment (``${OPENAI_BASE_URL}``). Substitution
happens on the parsed YAML's string values, never on the file's text, so a variable's value
is always one string (a value holding ``: `` or a newline cannot add keys).
``${VAR:-default}`` gives a default; ``$${`` is a literal ``${``. A variable that is not
set (and has no default) is an error naming it and where it is used, before anything runs: a
judge silently pointed at ``""`` would cost a whole run.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

_VARIABLE = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A config is invalid; the message names the file (or source) and the key.

    ``key`` is the offending key's path (``budget.max_metric_calls``) when it is known, so
    the HTTP API can answer a 422 that names the field instead of parsing the message."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class MissingVariableError(ValueError):
    """A ``${VAR}`` names an environment variable that is not set."""


def substitute_env(value: Any, *, env: Mapping[str, str] | None = None, where: str = "") -> Any:
    """``value`` (parsed YAML) with every ``${VAR}`` in its strings replaced (keys too are
    left alone: they are the config's own words)."""
    environ = os.environ if env is None else env
    if isinstance(value, str):
        return _substitute(value, environ, where)
    if isinstance(value, list):
        return [substitute_env(v, env=environ, where=f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            k: substitute_env(v, env=environ, where=f"{where}.{k}" if where else str(k))
            for k, v in value.items()
        }
    return value


def _substitute(text: str, env: Mapping[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        escaped, name, default = match.groups()
        if escaped:
            return match.group(0)[1:]
        if name in env:
            return env[name]
        if default is not None:
            return default
        place = f" (used in {where!r})" if where else ""
        raise MissingVariableError(f"environment variable {name} is not set{place}")

    return _VARIABLE.sub(replace, text) if "${" in text else text


def read_config_file(path: Path, *, error: type[ConfigError] = ConfigError) -> dict[str, Any]:
    """The config file's top-level mapping with ``${VAR}`` substituted (an empty file is
    ``{}``). Raises ``error`` with one line naming the file."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise error(f"{path}: expected a mapping at the top level")
    try:
        substituted: dict[str, Any] = substitute_env(raw)
    except MissingVariableError as exc:
        raise error(f"{path}: {exc}") from None
    return substituted


def anchor_paths(raw: dict[str, Any], keys: Iterable[str], folder: Path) -> dict[str, Any]:
    """``raw`` with each relative path under ``keys`` made relative to ``folder`` (the config
    file's): a config names its data the way its author sees it, next to the file."""
    for key in keys:
        value = raw.get(key)
        if isinstance(value, str) and not Path(value).is_absolute():
            raw[key] = str(folder / value)
    return raw


def merge_overrides(
    raw: Mapping[str, Any], overrides: Mapping[str, Any], *, merged: Iterable[str] = ()
) -> dict[str, Any]:
    """The file's keys with the overrides that were given (not ``None``: a CLI flag left out)
    on top. For a key in ``merged`` a mapping (``min`` gates) is merged into the file's and a
    list (``require``) extends it; any other override replaces the file's value."""
    result = dict(raw)
    combine = set(merged)
    for key, value in overrides.items():
        if value is None:
            continue
        if key in combine and isinstance(value, dict) and isinstance(raw.get(key), dict):
            value = {**raw[key], **value}
        elif key in combine and isinstance(value, list) and isinstance(raw.get(key), list):
            value = [*raw[key], *value]
        result[key] = value
    return result


def allowed_keys(model: type[BaseModel]) -> list[str]:
    """The keys a config model accepts, as a user writes them (aliases such as ``min``)."""
    return sorted({field.alias or name for name, field in model.model_fields.items()})


def validate_config(
    model: type[M],
    raw: Mapping[str, Any],
    *,
    source: str,
    error: type[ConfigError] = ConfigError,
    nested: Mapping[str, type[BaseModel]] | None = None,
    explain: Callable[[ErrorDetails], str | None] | None = None,
) -> M:
    """``model`` validated from ``raw``, or ``error`` with one line: ``SOURCE: MESSAGE`` for
    the first problem, naming the key by its dotted path. ``nested`` names the models of
    mapping-valued keys (``budget`` → ``Budget``) so an unknown nested key lists its own
    siblings; ``explain`` may word an error its own way (return ``None`` for the default)."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        where = ".".join(loc) or "config"
        message = explain(first) if explain is not None else None
        if message is not None:
            pass
        elif first["type"] == "extra_forbidden":
            owner: type[BaseModel] = model
            if len(loc) > 1 and nested is not None and loc[0] in nested:
                owner = nested[loc[0]]
            keys = allowed_keys(owner)
            close = difflib.get_close_matches(loc[-1], keys, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"unknown key {where!r}{hint} (allowed keys: {', '.join(keys)})"
        elif first["type"] == "missing":
            message = f"missing key {where!r}"
        elif first["type"] == "literal_error" and "expected" in first.get("ctx", {}):
            expected = str(first["ctx"]["expected"]).replace("'", "")
            message = f"key {where!r}: {first['input']!r} is not one of {expected}"
        else:
            text = str(first["msg"]).removeprefix("Value error, ")
            message = text if not loc else f"key {where!r}: {text}"
        raise error(f"{source}: {message}", key=where if loc else None) from exc
