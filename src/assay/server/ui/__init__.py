"""The web UI: server-rendered HTML pages and their static assets.

The API's ``create_app`` mounts :data:`router` and serves :data:`STATIC_DIR` at
``/static``. Pages call the Python API (``assay.operations``, the store repositories)
directly, never the JSON API, so the HTML and the JSON never disagree about what is
stored; the live parts (progress, scorer forms, preview, annotations) are ``static/app.js``
talking to the JSON API.
"""

from __future__ import annotations

from assay.server.ui.pages import router
from assay.server.ui.paths import STATIC_DIR, TEMPLATES_DIR

__all__ = ["STATIC_DIR", "TEMPLATES_DIR", "router"]
