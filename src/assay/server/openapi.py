"""The committed OpenAPI spec (docs/openapi.json): ``python -m assay.server.openapi``
prints it; ``tests/server/test_app.py`` fails when the app's spec differs from the file."""

from __future__ import annotations

import json
import sys

REGENERATE = "python -m assay.server.openapi > docs/openapi.json"


def openapi_text() -> str:
    """The app's spec as committed: sorted keys, two-space indent, a final newline."""
    from assay.server.app import create_app

    spec = create_app(store_url="sqlite://").openapi()
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(openapi_text())
