"""Whether the environment's API keys may go to a base URL someone named explicitly.

Why: a model string with an explicit ``base_url`` (``openai/gpt-4o`` at
``http://127.0.0.1:9000/v1``) gets the provider's key variable (``OPENAI_API_KEY``) as its
bearer token. From the CLI that is what the user asked for. In a server, the base URL may
come from a request, and whatever listens at it (a loopback port is anybody's on a shared
machine) would collect the operator's key. So a host application installs a guard with
:func:`env_key_guard`: while it is active (a context variable, so it follows the tasks and
threads started under it), ``assay.models.providers`` attaches the environment's keys to an
explicit base URL only when the guard allows that URL; otherwise the model sends no key
(a key given in code, ``api_key=``, is unaffected). Without a guard nothing changes.
Base URLs that come from the environment (``OPENAI_BASE_URL``...) are the operator's and
always get their keys. A plugin provider (entry point ``assay.models``) that takes a
``base_url`` and reads keys itself should ask :func:`env_keys_allowed` too.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EnvKeyGuard = Callable[[str], bool]
"""Takes an explicit base URL; true when the environment's API keys may be sent there."""

_GUARD: contextvars.ContextVar[EnvKeyGuard | None] = contextvars.ContextVar(
    "assay_env_key_guard", default=None
)


def env_keys_allowed(base_url: str) -> bool:
    """Whether the environment's keys may go to ``base_url`` under the active guard (no
    guard: yes)."""
    guard = _GUARD.get()
    return guard is None or guard(base_url)


@contextmanager
def env_key_guard(allows: EnvKeyGuard) -> Iterator[None]:
    """Within this block (and the tasks and context-copying threads started in it), send
    the environment's keys to an explicit base URL only when ``allows(url)``."""
    token = _GUARD.set(allows)
    try:
        yield
    finally:
        _GUARD.reset(token)
