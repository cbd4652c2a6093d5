"""Which model endpoints a request may point the server at: the base-URL policy.

Why a policy: a ``base_url`` in a request makes the server send HTTP requests (with the
prompts, and with the API key of that provider's variable) to an address the client chose;
from a server reachable by others that is a way to reach hosts behind its firewall or to
collect its keys. So a request may name a base URL only when it is

* a loopback URL (``http(s)://localhost``, ``127.0.0.0/8``, ``[::1]``, any port): a model
  server on the same machine, what a developer runs next to ``assay serve``; or
* listed by the server's operator in ``ASSAY_SERVER_ALLOWED_BASE_URLS`` (comma-separated;
  or ``create_app(allowed_base_urls=[...])``). An entry allows its own scheme, host and
  port, and every path under its path (``https://gateway.internal/v1`` allows
  ``https://gateway.internal/v1`` and ``.../v1/team-a``, not ``.../v2``).

Model strings without a base URL use the server's own configuration (``OPENAI_BASE_URL``
and the like), which the operator set. Host names are compared as written, never resolved
(a name that resolves to 127.0.0.1 is not "loopback"). Applies to every request that makes
the server call a model: ``POST /api/optimize`` (``task_base_url``, ``reflection_base_url``,
and any scorer's ``params.base_url``), ``POST /api/optimizations/{id}/resume`` (the stored
config's), ``POST /api/runs`` (``target.base_url`` and any scorer's) and
``POST /api/scorers/test`` (any scorer's).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from assay.models.http import is_loopback_host
from assay.operations.scorer_preview import FieldProblem

ALLOWED_ENV = "ASSAY_SERVER_ALLOWED_BASE_URLS"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_from_env() -> tuple[str, ...]:
    """The entries of ``ASSAY_SERVER_ALLOWED_BASE_URLS`` (comma-separated, blanks ignored)."""
    raw = os.environ.get(ALLOWED_ENV, "")
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _parts(url: str) -> tuple[str, str, int, str] | None:
    """(scheme, host, port, path) of an http(s) URL; ``None`` when it is not one."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port or _DEFAULT_PORTS[scheme], parts.path.rstrip("/")


def is_loopback_url(url: str) -> bool:
    """An http(s) URL whose host is ``localhost`` or a loopback IP literal."""
    parts = _parts(url)
    if parts is None:
        return False
    return is_loopback_host(parts[1])


def base_url_allowed(url: str, allowed: Iterable[str]) -> bool:
    """Whether a request may name ``url`` (see the module docstring)."""
    if is_loopback_url(url):
        return True
    wanted = _parts(url)
    if wanted is None:
        return False
    for entry in allowed:
        rule = _parts(entry)
        if rule is None or rule[:3] != wanted[:3]:
            continue
        if wanted[3] == rule[3] or wanted[3].startswith(rule[3] + "/"):
            return True
    return False


def _refusal(url: str) -> str:
    return (
        f"base URL {url!r} is not allowed: a request may only name a loopback URL or one "
        f"the server lists in {ALLOWED_ENV}"
    )


def scorer_base_url_problems(scorers: Sequence[Any], allowed: Sequence[str]) -> list[FieldProblem]:
    """Every scorer ``params.base_url`` the policy refuses, named ``scorers[i].params.base_url``
    (scorers given as type ids carry no base URL)."""
    found: list[tuple[list[str | int], Any]] = []
    for index, spec in enumerate(scorers):
        params = spec.get("params") if isinstance(spec, Mapping) else None
        if isinstance(params, Mapping):
            found.append((["scorers", index, "params", "base_url"], params.get("base_url")))
    return _refused(found, allowed)


def base_url_problems(config: Mapping[str, Any], allowed: Sequence[str]) -> list[FieldProblem]:
    """Every base URL of an optimization request (or stored config) the policy refuses,
    named by its field: ``task_base_url``, ``reflection_base_url``,
    ``scorers[i].params.base_url``."""
    found: list[tuple[list[str | int], Any]] = [
        (["task_base_url"], config.get("task_base_url")),
        (["reflection_base_url"], config.get("reflection_base_url")),
    ]
    return _refused(found, allowed) + scorer_base_url_problems(config.get("scorers") or [], allowed)


def run_base_url_problems(
    target: Mapping[str, Any] | None, scorers: Sequence[Any], allowed: Sequence[str]
) -> list[FieldProblem]:
    """Every base URL of a run request the policy refuses: ``target.base_url`` (a model
    target's endpoint) and ``scorers[i].params.base_url``."""
    found: list[tuple[list[str | int], Any]] = [
        (["target", "base_url"], None if target is None else target.get("base_url"))
    ]
    return _refused(found, allowed) + scorer_base_url_problems(scorers, allowed)


def _refused(
    found: Iterable[tuple[list[str | int], Any]], allowed: Sequence[str]
) -> list[FieldProblem]:
    return [
        FieldProblem(loc=loc, msg=_refusal(str(url)), type="base_url_not_allowed")
        for loc, url in found
        if url is not None and not base_url_allowed(str(url), allowed)
    ]
