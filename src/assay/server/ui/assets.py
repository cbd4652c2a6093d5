"""The UI's static files under URLs that name their content, cached for good.

Served plainly, ``/static/app.css`` carries only ``Last-Modified`` and an ETag, so a
browser guesses how long it stays fresh (a tenth of its age): a package installed an hour
ago is asked about again every few minutes, and every page then waits for that round trip
before it may paint (the stylesheet blocks rendering). Pages link ``asset("app.css")``,
``/static/app.css?v=<hash of its bytes>``; a request whose ``v`` is the file's current hash
is answered ``immutable`` (a changed file gets a new URL, so nothing stale is kept), any
other (an old page's link, a hand-typed URL) must be revalidated.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from urllib.parse import parse_qs

from starlette.responses import Response
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import Scope

from assay.server.ui.paths import STATIC_DIR

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@functools.lru_cache(maxsize=64)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """The first 12 hex digits of the file's SHA-256 (keyed by its stat: a file changed
    under a running server gets a new version)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def version_of(path: Path) -> str:
    stat = path.stat()
    return _digest(str(path), stat.st_mtime_ns, stat.st_size)


def asset(name: str) -> str:
    """The URL of static file ``name`` (``app.css``) with its content's version."""
    return f"/static/{name}?v={version_of(STATIC_DIR / name)}"


class VersionedStaticFiles(StaticFiles):
    """``StaticFiles`` whose answers to versioned URLs (``asset``) are cached for good."""

    def file_response(
        self, full_path: PathLike, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        query = parse_qs(
            bytes(scope.get("query_string", b"")).decode("latin-1"), keep_blank_values=True
        )
        wanted = query.get("v")
        if wanted is not None:
            current = _digest(str(full_path), stat_result.st_mtime_ns, stat_result.st_size)
            response.headers["Cache-Control"] = IMMUTABLE if wanted == [current] else REVALIDATE
        return response
