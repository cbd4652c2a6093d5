"""The HTTP server: the JSON API (``server.api``) and the web UI (``server.ui``) over the
same Python operations the CLI calls. Start it with ``assay serve`` or build the app with
``assay.server.app.create_app``; see docs/server.md.

The server is the ``server`` extra (FastAPI, uvicorn, python-multipart; it pulls in the
``optimize`` extra for its optimization pages): importing this room without it raises the
one-line ``MissingExtraError``.
"""

from __future__ import annotations

from assay.extras import require_extra

require_extra("server", "the assay server")
require_extra("optimize", "the assay server")
