"""A real OpenAI-compatible HTTP endpoint on loopback, serving the embedded SmolLM2 model.

Why: the network client, the cache and the retry layer are only really tested against a real
server. llama.cpp's server (through xllamacpp, no separate binary) speaks the OpenAI
chat-completions API, including ``response_format`` JSON-schema constrained output, so a
test — or a user trying assay offline — can point any OpenAI-compatible client at it::

    with serve_local_model() as server:
        model = OpenAICompatibleModel("smollm2-135m-instruct", base_url=server.base_url)

or from a shell (serves until Ctrl+C)::

    python -m assay.models.local_server --port 8081

The server runs in a child process (llama.cpp's threads there); leaving the ``with`` block
stops that process and closes the port. Answers come from a tiny smoke-test model (see
``assay.models.local``): good for plumbing, not for judgement.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from assay.models.base import ModelError
from assay.models.http import is_loopback_host
from assay.models.local import (
    DEFAULT_N_CTX,
    DEFAULT_THREADS,
    SMOKE_TEST_NOTICE,
    SMOLLM2_MODEL_ID,
    import_xllamacpp,
    require_local_model_packages,
    server_params,
)

_API_KEY_ENV = "ASSAY_LOCAL_SERVER_API_KEY"
_CHILD_START_GRACE_S = 30.0
"""Time for the child's interpreter and imports, on top of the model's ``ready_timeout_s``."""


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A running local endpoint: ``base_url`` is what OpenAI clients take (ends in ``/v1``)."""

    base_url: str
    root_url: str
    model: str
    api_key: str | None
    startup_seconds: float
    pid: int | None = None
    """The serving process (None when it runs in this process)."""

    def _get(self, path: str, timeout_s: float = 5.0) -> bytes:
        request = urllib.request.Request(self.root_url + path)
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body: bytes = response.read()
            return body

    def health(self) -> dict[str, object]:
        """``GET /health`` (``{"status": "ok"}`` once the model is loaded)."""
        data = json.loads(self._get("/health"))
        return data if isinstance(data, dict) else {"status": data}

    def metrics(self) -> dict[str, float]:
        """The server's Prometheus counters without the ``llamacpp:`` prefix.

        ``tokens_predicted_total`` and ``prompt_tokens_total`` only move when a completion is
        computed, which lets a test prove that a cache hit never reached the server.
        """
        values: dict[str, float] = {}
        for line in self._get("/metrics").decode().splitlines():
            if not line or line.startswith("#"):
                continue
            name, _, value = line.rpartition(" ")
            try:
                values[name.removeprefix("llamacpp:")] = float(value)
            except ValueError:
                continue
        return values


def _wait_until_ready(server: LocalServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last_error = "no answer"
    while True:
        try:
            if server.health().get("status") == "ok":
                return
            last_error = "health check did not report ok"
        except (OSError, urllib.error.URLError, ValueError) as exc:
            last_error = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise ModelError(
                f"local model server at {server.root_url} not ready after {timeout_s:g} s "
                f"({last_error})"
            )
        time.sleep(0.05)


def _start_in_this_process(
    *,
    host: str,
    port: int,
    api_key: str | None,
    n_ctx: int,
    threads: int,
    ready_timeout_s: float,
    verbose: bool,
) -> tuple[object, LocalServer]:
    """Start llama.cpp's server on this process's threads: what the server's own process runs.

    Returns the engine with the server: the caller keeps the engine referenced for as long as
    it serves, and stops by ending its process (os._exit), never by freeing the engine.
    """
    gguf_path = require_local_model_packages()
    xlc = import_xllamacpp()
    params = server_params(
        xlc,
        gguf_path,
        n_ctx=n_ctx,
        threads=threads,
        alias=SMOLLM2_MODEL_ID,
        host=host,
        port=port,
        api_key=api_key,
        verbose=verbose,
    )
    started = time.perf_counter()
    try:
        engine = xlc.Server(params)
    except Exception as exc:
        raise ModelError(
            f"could not start the local model server on {host}:{port}: {type(exc).__name__}: {exc}"
        ) from exc
    root_url = str(engine.listening_address).rstrip("/")
    server = LocalServer(
        base_url=root_url + "/v1",
        root_url=root_url,
        model=SMOLLM2_MODEL_ID,
        api_key=api_key,
        startup_seconds=0.0,
    )
    _wait_until_ready(server, ready_timeout_s)
    return engine, dataclasses.replace(server, startup_seconds=time.perf_counter() - started)


@contextmanager
def serve_local_model(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    n_ctx: int = DEFAULT_N_CTX,
    threads: int = DEFAULT_THREADS,
    ready_timeout_s: float = 60.0,
    stop_timeout_s: float = 10.0,
    verbose: bool = False,
) -> Iterator[LocalServer]:
    """Serve SmolLM2 over HTTP, in a child process, for the duration of the ``with`` block.

    Why a child process: freeing an in-process xllamacpp ``Server`` joins llama.cpp's
    threads, and that join once blocked a CI run for 90 minutes with nothing to interrupt it.
    A process can always be stopped: SIGTERM, then SIGKILL after ``stop_timeout_s``; the OS
    closes the port either way. ``port=0`` takes a free port chosen by the OS (no race
    between picking and binding); the child reports the address it bound. Binding to a
    non-loopback address needs an ``api_key``: llama.cpp's server otherwise accepts anyone,
    from any origin. The key travels in the child's environment, never on its command line.
    """
    if not is_loopback_host(host) and not api_key:
        raise ValueError(f"refusing to serve on {host!r} without an api_key (loopback is free)")
    require_local_model_packages()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="assay-local-server-") as workdir:
        ready_file = Path(workdir) / "ready.json"
        env = dict(os.environ)
        env.pop(_API_KEY_ENV, None)
        if api_key:
            env[_API_KEY_ENV] = api_key
        command = [
            sys.executable,
            "-m",
            "assay.models.local_server",
            "--host",
            host,
            "--port",
            str(port),
            "--threads",
            str(threads),
            "--n-ctx",
            str(n_ctx),
            "--ready-timeout",
            str(ready_timeout_s),
            "--ready-file",
            str(ready_file),
        ]
        if verbose:
            command.append("--verbose")
        with (Path(workdir) / "stderr.log").open("w+b") as stderr:
            process = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
            try:
                root_url = _await_ready_file(process, ready_file, ready_timeout_s, stderr)
                server = LocalServer(
                    base_url=root_url + "/v1",
                    root_url=root_url,
                    model=SMOLLM2_MODEL_ID,
                    api_key=api_key,
                    startup_seconds=time.perf_counter() - started,
                    pid=process.pid,
                )
                yield server
            finally:
                _stop(process, stop_timeout_s)


def _await_ready_file(
    process: subprocess.Popen[bytes], ready_file: Path, timeout_s: float, stderr: IO[bytes]
) -> str:
    """The root URL the child wrote once its server answered ``/health``; errors say why not."""
    deadline = time.monotonic() + timeout_s + _CHILD_START_GRACE_S
    while True:
        if ready_file.exists():
            data = json.loads(ready_file.read_text(encoding="utf-8"))
            return str(data["root_url"])
        code = process.poll()
        if code is not None:
            raise ModelError(
                f"the local model server exited with code {code} before it was ready: "
                f"{_tail(stderr)}"
            )
        if time.monotonic() >= deadline:
            raise ModelError(f"local model server not ready after {timeout_s:g} s: {_tail(stderr)}")
        time.sleep(0.05)


def _tail(stderr: IO[bytes], limit: int = 600) -> str:
    stderr.flush()
    stderr.seek(0)
    text = stderr.read().decode("utf-8", "replace").strip()
    return text[-limit:] if text else "no output"


def _stop(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """SIGTERM, then SIGKILL: a server that does not stop in time is killed, never waited on."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout_s)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    # Leave without running the xllamacpp destructor (see _start_in_this_process).
    sys.stdout.flush()
    os._exit(0)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted: a quick offline OpenAI-compatible endpoint for trying assay."""
    parser = argparse.ArgumentParser(
        prog="python -m assay.models.local_server",
        description="Serve the embedded SmolLM2 smoke-test model as an OpenAI-compatible API.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument(
        "--api-key",
        default=None,
        help=f"required off loopback; or set {_API_KEY_ENV} (keeps it off the command line)",
    )
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument("--ready-file", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    api_key = args.api_key or os.environ.get(_API_KEY_ENV) or None
    if not is_loopback_host(args.host) and not api_key:
        parser.error(f"refusing to serve on {args.host!r} without --api-key (loopback is free)")
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        _engine, server = _start_in_this_process(
            host=args.host,
            port=args.port,
            api_key=api_key,
            n_ctx=args.n_ctx,
            threads=args.threads,
            ready_timeout_s=args.ready_timeout,
            verbose=args.verbose,
        )
    except ModelError as exc:  # one line for the parent's error message, not a traceback
        print(f"error: {exc}", file=sys.stderr, flush=True)
        os._exit(2)
    if args.ready_file:
        ready = Path(args.ready_file)
        partial = ready.with_suffix(".partial")
        partial.write_text(json.dumps({"root_url": server.root_url}), encoding="utf-8")
        os.replace(partial, ready)
    else:
        print(f"serving {server.model} at {server.base_url} (Ctrl+C stops)")
        print(SMOKE_TEST_NOTICE, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    # Leave without freeing `_engine` (see _start_in_this_process); the OS closes the port.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
