"""Values given as text (CLI options, form fields, query strings) turned into Python values.

One set of rules for every text entry point, so ``assay score --param k=v``, ``assay run
--scorer '{"type": ...}'`` and an HTTP form agree:

- ``json_or_text``: text that starts with ``{`` or ``[`` is JSON (a config object, a list
  of chat messages); anything else is plain text. ``strict=True`` makes invalid JSON an
  error instead of text (for configs, where a typo must not become a type id).
- ``read_value``: ``@path`` reads the file first (then the same rule).
- ``scorer_value``: a scorer option: a ``.yaml``/``.yml`` file path is a scorer config
  file (what ``assay optimize-judge --write-best`` writes; read by ``config_file``, so
  ``${VAR}`` works as in run configs), anything else ``json_or_text``.
- ``parse_params``: ``key=value`` pairs; a value that parses as JSON is that value
  (``3``, ``true``, ``["a"]``), anything else is the text itself.
- ``check_pairs``: ``key=value`` pairs kept as text (field mappings, ``--map``).

Errors are ``InputError`` (a ``ValueError``) naming the option or field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """A text value could not be read or parsed; the message names the option."""


def json_or_text(value: str | None, *, option: str = "value", strict: bool = False) -> Any:
    """JSON for text that starts with ``{`` or ``[``, else the text (``None`` stays)."""
    if value is None or value.lstrip()[:1] not in ("{", "["):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        if not strict:
            return value
        raise InputError(f"{option}: invalid JSON {value!r}: {exc.msg}") from exc


def scorer_value(value: str, *, option: str = "--scorer") -> Any:
    """A scorer given on the command line: a type id, a JSON config, or the path of a YAML
    file holding one config (``{type, params}``)."""
    if value.lower().endswith((".yaml", ".yml")):
        # the one YAML config reader: safe YAML, ${VAR} from the environment, one error line
        from assay.config_file import ConfigError, read_config_file

        path = Path(value)
        try:
            loaded = read_config_file(path)
        except ConfigError as exc:
            raise InputError(f"{option}: {exc}") from exc
        if not isinstance(loaded.get("type"), str):
            raise InputError(f"{option}: {path} must hold one scorer config with a 'type'")
        return loaded
    return json_or_text(value, option=option, strict=True)


def read_value(raw: str | None, option: str = "value") -> Any:
    """``@path`` reads a file (JSON if it parses, else text); other values as
    ``json_or_text``, so chat message lists can be passed inline."""
    if raw is None:
        return None
    if raw.startswith("@"):
        path = Path(raw[1:])
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{option}: cannot read {path}: {exc.strerror or exc}") from exc
    value = json_or_text(raw.strip(), option=option)
    return raw if isinstance(value, str) else value


def parse_params(pairs: list[str], option: str = "--param") -> dict[str, Any]:
    """``["k=v", ...]`` as a dict; values are JSON when they parse, else text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{option} {pair!r}: expected key=value")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def check_pairs(pairs: list[str], option: str) -> list[str]:
    """Check ``key=value`` pairs (both sides non-empty) and return them unchanged."""
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{option} {pair!r}: expected key=value")
    return pairs
