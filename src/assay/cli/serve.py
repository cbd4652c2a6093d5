"""``assay serve``: the HTTP API and web UI under uvicorn.

uvicorn loads the app by its import string, ``assay.server.app:app_from_env`` (a
factory), so ``assay --help`` never pays for importing FastAPI and the server. The settings
travel in the environment the factory reads: ``ASSAY_DATABASE_URL``,
``ASSAY_SERVER_TOKEN``, ``ASSAY_SERVER_HOST`` (the bound address, for the ``Host`` check).
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from assay.cli.common import CliError, console

TOKEN_ENV = "ASSAY_SERVER_TOKEN"
APP_FACTORY = "assay.server.app:app_from_env"
LOOPBACK_HOSTS = frozenset({"localhost", "::1"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def serve(
    host: Annotated[
        str, typer.Option(help="Interface to bind (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8765,
    db: Annotated[
        str | None, typer.Option("--db", help="Store URL (default: $ASSAY_DATABASE_URL).")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(help=f"Token every request must present (default: ${TOKEN_ENV})."),
    ] = None,
) -> None:
    """Serve the JSON API and the web UI. A non-loopback --host needs a token (a strong
    one); requests must name the server by a loopback name, the --host address or a name
    of $ASSAY_SERVER_ALLOWED_HOSTS."""
    from assay.server import security

    token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback(host) and not token:
        raise CliError(
            f"binding to {host!r} exposes the server beyond this machine: give --token "
            f"(or set ${TOKEN_ENV}), or bind to 127.0.0.1"
        )
    weakness = None if token is None else security.token_weakness(token)
    if weakness is not None:
        raise CliError(weakness)
    if host.strip() in security.WILDCARD_BINDS and not security.allowed_hosts_from_env():
        raise CliError(
            f"binding to {host!r} (every interface): set ${security.ALLOWED_HOSTS_ENV} to the "
            "names clients use for this server (comma-separated; '*' accepts any name)"
        )
    import uvicorn

    os.environ[security.BIND_HOST_ENV] = host
    if db:
        os.environ["ASSAY_DATABASE_URL"] = db
    if token:
        os.environ[TOKEN_ENV] = token
    url = f"http://{host}:{port}/"
    # the token itself is never printed: this line often ends up in a log file
    hint = f"; open {url}?token=<your token> once in a browser" if token else ""
    console.print(f"assay server on {url} (Ctrl-C stops it{hint})")
    uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level="info")
