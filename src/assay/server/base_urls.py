"""Which model endpoints a request may point the server at: the base-URL policy.

Why a policy: a ``base_url`` in a request makes the server send HTTP requests (with the
prompts) to an address the client chose; from a server reachable by others that is a way
to reach hosts behind its firewall or to collect its keys. So a request may name a base
URL only when it is

* a loopback URL (``http(s)://localhost``, ``127.0.0.0/8``, ``[::1]``, any port): a model
  server on the same machine, what a developer runs next to ``assay serve``; or
* listed by the server's operator in ``ASSAY_SERVER_ALLOWED_BASE_URLS`` (comma-separated;
  or ``create_app(allowed_base_urls=[...])``). An entry allows its own scheme, host and
  port, and every path under its path (``https://gateway.internal/v1`` allows
  ``https://gateway.internal/v1`` and ``.../v1/team-a``, not ``.../v2``).

Model strings without a base URL use the server's own configuration (``OPENAI_BASE_URL``
and the like), which the operator set. Host names are compared as written, never resolved
(a name that resolves to 127.0.0.1 is not "loopback").

One function, :func:`url_problems`, applies the policy to a whole request body (or a
stored config being resumed), at any depth, whatever the field is called: a key that
names an endpoint (``base_url``, ``*_url``, ``endpoint``, ``host``...) must hold an allowed
URL, and any other string that *is* a URL (``scheme://...``) must be allowed too, so a
scorer param or target field added later cannot carry one past it. Texts are the
exception: the evaluation items (``data``, ``rows``) are not walked, and in the fields of
``TEXT_KEYS`` (prompts, candidates, what a check expects) a URL is content (an
endpoint-named key inside them is still checked). The server calls it
for ``POST /api/runs``, ``POST /api/scorers/test``, ``POST /api/optimize`` and the resume
of a run or an optimization (the stored target, scorers and config);
``tests/server/test_base_urls.py`` walks the JSON Schema of every request body to prove it
reaches every field.

Keys: passing the policy is not enough to receive the server's API keys. A loopback port
is whatever happens to listen there, so :func:`env_keys_may_go_to` lets the environment's
provider keys (``OPENAI_API_KEY``...) go to an explicitly named base URL only when the
operator listed it (or set it, ``ASSAY_JUDGE_BASE_URL``); :class:`GuardEnvKeys` installs
that rule (``assay.models.env_keys``) around everything the app does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from assay.models.env_keys import env_key_guard
from assay.models.http import is_loopback_host
from assay.operations.scorer_preview import FieldProblem

ALLOWED_ENV = "ASSAY_SERVER_ALLOWED_BASE_URLS"
OPERATOR_URL_ENVS = ("ASSAY_JUDGE_BASE_URL",)
"""Variables whose URL the scorers pass on explicitly: the operator chose them."""
_DEFAULT_PORTS = {"http": 80, "https": 443}

ITEM_KEYS = frozenset({"data", "rows"})
"""Keys whose list values are evaluation items (inputs, outputs, references): texts, which
may quote a URL, never an endpoint the server calls."""
TEXT_KEYS = frozenset(
    {
        # names and templates of runs, targets and optimizations
        "name",
        "description",
        "prompt",
        "system",
        "candidate",
        # what scorers compare an output with (a check may expect a URL in the answer)
        "expected",
        "unwanted",
        "regex",
        "context",
        "criteria",
        "criterion",
        "source",
        "reference_tone",
        "baseline_response",
        "noisy_query",
        "input",
        "output",
        "expected_output",
    }
)
"""Keys whose values are texts the server shows or compares, never connects to: a URL in
them is content (``check-equals`` expecting ``https://docs.example.com``), so they are not
walked. Every other string of a request is (``tests/server/test_base_urls.py`` proves it
field by field)."""

_ENDPOINT_KEY = re.compile(
    r"(?:^|_)(?:url|urls|uri|endpoint|endpoints|host|hosts|api_base|base|proxy|address)$",
    re.IGNORECASE,
)
_URL_VALUE = re.compile(r"^\s*(?:[a-z][a-z0-9+.\-]*:)?//\S", re.IGNORECASE)

Loc = list[str | int]


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


def listed(url: str, allowed: Iterable[str]) -> bool:
    """Whether an entry of the operator's list covers ``url`` (same scheme, host and port;
    the entry's path or one under it)."""
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


def base_url_allowed(url: str, allowed: Iterable[str]) -> bool:
    """Whether a request may name ``url`` (see the module docstring)."""
    return is_loopback_url(url) or listed(url, allowed)


def env_keys_may_go_to(url: str, allowed: Iterable[str]) -> bool:
    """Whether the environment's API keys may be sent to ``url``, a base URL named
    explicitly: only to one the operator listed or set (never to a loopback port merely
    because the policy lets a request name it)."""
    operator_urls = [os.environ.get(name, "") for name in OPERATOR_URL_ENVS]
    return listed(url, allowed) or any(
        entry and _parts(entry) is not None and _parts(entry) == _parts(url)
        for entry in operator_urls
    )


def names_endpoint(key: str) -> bool:
    """Whether a field called ``key`` holds an address the server would connect to."""
    return bool(_ENDPOINT_KEY.search(key))


def looks_like_url(value: str) -> bool:
    """``scheme://...`` or ``//host...`` (with nothing but the URL in the string)."""
    return bool(_URL_VALUE.match(value)) and len(value.split()) == 1


def _refusal(url: Any) -> str:
    shown = url if isinstance(url, str) and len(url) <= 200 else f"{str(url)[:200]}..."
    return (
        f"base URL {shown!r} is not allowed: a request may only name a loopback URL or one "
        f"the server lists in {ALLOWED_ENV}"
    )


def url_problems(body: Any, allowed: Sequence[str], loc: Loc | None = None) -> list[FieldProblem]:
    """Every URL in ``body`` (a request body or a stored config, as JSON data) that the
    policy refuses, named by its path (``target.params.base_url``,
    ``scorers[1].params.base_url``, ``task_base_url``...). See the module docstring."""
    return _walk(body, tuple(allowed), [] if loc is None else loc, text=False)


def _walk(body: Any, allowed: tuple[str, ...], where: Loc, *, text: bool) -> list[FieldProblem]:
    """``text``: under a ``TEXT_KEYS`` field, where only endpoint-named keys are checked."""
    problems: list[FieldProblem] = []
    if isinstance(body, Mapping):
        for key, value in body.items():
            path = [*where, str(key)]
            if value is None or (str(key) in ITEM_KEYS and isinstance(value, list)):
                continue
            if names_endpoint(str(key)) and not isinstance(value, Mapping | list):
                if not isinstance(value, str) or not base_url_allowed(value, allowed):
                    problems.append(_problem(path, value))
                continue
            problems += _walk(value, allowed, path, text=text or str(key) in TEXT_KEYS)
    elif isinstance(body, list | tuple):
        for index, value in enumerate(body):
            problems += _walk(value, allowed, [*where, index], text=text)
    elif (
        isinstance(body, str)
        and not text
        and looks_like_url(body)
        and not base_url_allowed(body, allowed)
    ):
        problems.append(_problem(where, body))
    return problems


def _problem(loc: Loc, url: Any) -> FieldProblem:
    return FieldProblem(loc=loc or ["body"], msg=_refusal(url), type="base_url_not_allowed")


class GuardEnvKeys:
    """ASGI middleware: everything the app does for a request (and the background work it
    starts, which inherits the context) sends the environment's API keys to an explicitly
    named base URL only when :func:`env_keys_may_go_to` says so."""

    def __init__(self, app: Any, allowed: Sequence[str]) -> None:
        self.app = app
        self.allows = partial(_may_go_to, tuple(allowed))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        with env_key_guard(self.allows):
            await self.app(scope, receive, send)


def _may_go_to(allowed: tuple[str, ...], url: str) -> bool:
    return env_keys_may_go_to(url, allowed)
