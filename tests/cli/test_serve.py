"""``assay serve``: refuses an exposed bind without a token, a weak token, a wildcard bind
without host names; serves the API for real, only under its own names, and keeps the
token out of its access log."""

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


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", "serve", *args],
        env={
            **os.environ,
            "ASSAY_SERVER_TOKEN": "",
            "ASSAY_SERVER_ALLOWED_HOSTS": "",
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_weak_token_is_refused_at_start_up() -> None:
    for weak in ("s3cret", "aaaaaaaaaaaaaaaaaaaaaaaa", "121212121212121212121212"):
        result = _serve("--port", "1", "--token", weak)
        assert result.returncode == 2, result.stderr
        assert "token is too weak" in result.stderr and "secrets.token_urlsafe" in result.stderr
        assert weak not in result.stderr  # the message does not repeat the token
        assert "Traceback" not in result.stderr


def test_a_wildcard_bind_needs_the_names_clients_use() -> None:
    result = _serve("--host", "0.0.0.0", "--port", "1", "--token", TOKEN)
    assert result.returncode == 2, result.stderr
    assert "ASSAY_SERVER_ALLOWED_HOSTS" in result.stderr


TOKEN = "serve-test-token-3f9a1c7e5b"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_answers_with_the_token_it_was_given(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "ASSAY_DATABASE_URL": "", "ASSAY_SERVER_TOKEN": ""}
    env["ASSAY_SERVER_ALLOWED_HOSTS"] = "assay.internal"
    command = [
        sys.executable, "-m", "assay", "serve", "--port", str(port),
        "--db", f"sqlite:///{tmp_path / 'served.db'}", "--token", TOKEN,
    ]  # fmt: skip
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=sink, stderr=sink)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"{base}/api/datasets", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                assert server.poll() is None, log.read_text()
                time.sleep(0.2)
        assert answer.status_code == 401
        authed = httpx.get(f"{base}/api/datasets", headers={"Authorization": f"Bearer {TOKEN}"})
        assert authed.status_code == 200 and authed.json() == []
        assert authed.headers["x-frame-options"] == "DENY"
        assert (tmp_path / "served.db").exists()  # --db reached the app
        by_query = httpx.get(f"{base}/api/datasets?limit=5&token={TOKEN}")
        assert by_query.status_code == 200
        # DNS rebinding: the same socket, reached under another name
        rebound = httpx.get(f"{base}/api/datasets?token={TOKEN}", headers={"Host": "evil.example"})
        assert rebound.status_code == 421
        named = httpx.get(f"{base}/api/datasets?token={TOKEN}", headers={"Host": "assay.internal"})
        assert named.status_code == 200
        localhost = httpx.get(f"http://localhost:{port}/api/datasets?token={TOKEN}")
        assert localhost.status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=10)
    written = log.read_text()
    assert "GET /api/datasets?limit=5&token=[redacted]" in written  # the access log is on
    assert TOKEN not in written
