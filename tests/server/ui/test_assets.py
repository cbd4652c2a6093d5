"""Static files under URLs that name their content: cached for good when the version is
the file's, revalidated otherwise."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from assay.server.ui.assets import IMMUTABLE, REVALIDATE, VersionedStaticFiles, asset, version_of
from assay.server.ui.paths import STATIC_DIR


def _client(directory: Path) -> TestClient:
    app = FastAPI()
    app.mount("/static", VersionedStaticFiles(directory=directory), name="static")
    return TestClient(app)


def test_the_version_is_the_content_hash_and_follows_changes(tmp_path: Path) -> None:
    sheet = tmp_path / "app.css"
    sheet.write_text("body { color: red }")
    first = version_of(sheet)
    assert first == hashlib.sha256(b"body { color: red }").hexdigest()[:12]
    sheet.write_text("body { color: blue }")
    os.utime(sheet, ns=(1, 10**18))  # a new stat even on a coarse clock
    assert version_of(sheet) != first


def test_versioned_urls_are_immutable_others_revalidate(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("console.log(1)")
    client = _client(tmp_path)
    current = version_of(tmp_path / "app.js")
    answer = client.get(f"/static/app.js?v={current}")
    assert answer.status_code == 200 and answer.text == "console.log(1)"
    assert answer.headers["cache-control"] == IMMUTABLE
    for query in ("v=0123456789ab", "v=", f"v={current}&v=other", "v=%00%ff<script>"):
        stale = client.get(f"/static/app.js?{query}")
        assert stale.status_code == 200, query
        assert stale.headers["cache-control"] == REVALIDATE, query
    assert "cache-control" not in client.get("/static/app.js").headers
    assert client.get(f"/static/nothing.js?v={current}").status_code == 404


def test_pages_link_the_current_versions(client: TestClient, runs: dict[str, str]) -> None:
    html = client.get(f"/runs/{runs['good']}").text
    for name in ("app.css", "app.js"):
        assert asset(name) == f"/static/{name}?v={version_of(STATIC_DIR / name)}"
        assert f'"{asset(name)}"' in html
