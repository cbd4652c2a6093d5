"""``${VAR}`` in YAML configs: a value taken from the environment (``${OPENAI_BASE_URL}``).

Substitution happens on the parsed YAML's string values, never on the file's text, so a
variable's value is always one string (a value holding ``: `` or a newline cannot add keys).
``${VAR:-default}`` gives a default; ``$${`` is a literal ``${``. A variable that is not set
(and has no default) is an error naming it and where it is used, before anything runs: a
judge silently pointed at ``""`` would cost a whole run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

_VARIABLE = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


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
