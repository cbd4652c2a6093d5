"""``assay serve``: refuses an exposed bind without a token; serves the API for real."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from assay.cli.app import app
from assay.cli.common import CliError


def test_non_loopback_bind_without_token_is_refused() -> None:
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"], env={"ASSAY_SERVER_TOKEN": ""})
    # main() prints a CliError as one line and exits 2; the Typer app raises it
    assert isinstance(result.exception, CliError)
    assert "--token" in str(result.exception)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_answers_with_the_token_it_was_given(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "ASSAY_DATABASE_URL": "", "ASSAY_SERVER_TOKEN": ""}
    command = [
        sys.executable, "-m", "assay", "serve", "--port", str(port),
        "--db", f"sqlite:///{tmp_path / 'served.db'}", "--token", "tok",
    ]  # fmt: skip
    server = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"{base}/api/datasets", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
                time.sleep(0.2)
        assert answer.status_code == 401
        authed = httpx.get(f"{base}/api/datasets", headers={"Authorization": "Bearer tok"})
        assert authed.status_code == 200 and authed.json() == []
        assert (tmp_path / "served.db").exists()  # --db reached the app
    finally:
        server.terminate()
        server.wait(timeout=10)
