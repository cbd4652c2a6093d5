"""The launcher page (``/runs/new``) against the real app: every target it offers as an
example is one the server starts a run with (it once offered a ``callable`` target, which
the server refuses: code-importing targets run from the CLI)."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.server.app import create_app


def test_every_example_target_on_the_launcher_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the example names a hosted model: its calls go to a closed loopback port instead
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    app = create_app(store_url=str(tmp_path / "l.db"), data_dir=tmp_path / "data")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        made = client.post(
            "/api/datasets/team%2Fqa/import",
            files={"file": ("d.jsonl", b'{"id": "a", "input": "q", "output": "x"}\n')},
        )
        assert made.status_code == 200, made.text
        page = client.get("/runs/new", params={"dataset": "team/qa"}).text
        assert '<option value="team/qa" selected>' in page
        placeholder = re.search(r"id=\"launch-target\"[^>]*placeholder='([^']*)'", page)
        examples = re.findall(r"<code data-example-target>([^<]*)</code>", page)
        assert placeholder and examples
        targets = [json.loads(html.unescape(t)) for t in [placeholder.group(1), *examples]]
        assert "callable" not in json.dumps(targets)
        for target in targets:
            started = client.post(
                "/api/runs",
                json={"dataset": "team/qa", "scorers": ["exact-match"], "target": target},
            )
            assert started.status_code == 201, (target, started.text)
            run_id = started.json()["run_id"]
            deadline = time.monotonic() + 30
            while client.get(f"/api/runs/{run_id}").json()["status"] in ("pending", "running"):
                assert time.monotonic() < deadline, f"run {run_id} still going after 30 s"
                time.sleep(0.05)
