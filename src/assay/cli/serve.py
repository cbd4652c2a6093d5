"""``assay serve``: the HTTP API and web UI under uvicorn.

uvicorn loads the app by its import string, ``assay.server.app:app_from_env`` (a
factory), so ``assay --help`` never pays for importing FastAPI and the server. The settings
travel in the environment the factory reads: ``ASSAY_DATABASE_URL``,
``ASSAY_SERVER_TOKEN``.
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
    """Serve the JSON API and the web UI. A non-loopback --host needs a token."""
    token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback(host) and not token:
        raise CliError(
            f"binding to {host!r} exposes the server beyond this machine: give --token "
            f"(or set ${TOKEN_ENV}), or bind to 127.0.0.1"
        )
    import uvicorn

    if db:
        os.environ["ASSAY_DATABASE_URL"] = db
    if token:
        os.environ[TOKEN_ENV] = token
    url = f"http://{host}:{port}/" + (f"?token={token}" if token else "")
    console.print(f"assay server on {url} (Ctrl-C stops it)")
    uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level="info")
