"""A real OpenAI-compatible HTTP endpoint on loopback, serving the embedded SmolLM2 model.

Why: the network client, the cache and the retry layer are only really tested against a real
server. llama.cpp's server (through xllamacpp, no separate binary) speaks the OpenAI
chat-completions API, including ``response_format`` JSON-schema constrained output, so a
test — or a user trying assay offline — can point any OpenAI-compatible client at it::

    with serve_local_model() as server:
        model = OpenAICompatibleModel("smollm2-135m-instruct", base_url=server.base_url)

or from a shell (serves until Ctrl+C)::

    python -m assay.models.local_server --port 8081

The server runs inside this process on llama.cpp's own threads; leaving the ``with`` block
frees it and closes the port. Answers come from a tiny smoke-test model (see
``assay.models.local``): good for plumbing, not for judgement.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A running local endpoint: ``base_url`` is what OpenAI clients take (ends in ``/v1``)."""

    base_url: str
    root_url: str
    model: str
    api_key: str | None
    startup_seconds: float

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


@contextmanager
def serve_local_model(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    n_ctx: int = DEFAULT_N_CTX,
    threads: int = DEFAULT_THREADS,
    ready_timeout_s: float = 60.0,
    verbose: bool = False,
) -> Iterator[LocalServer]:
    """Serve SmolLM2 over HTTP for the duration of the ``with`` block.

    ``port=0`` takes a free port chosen by the OS (no race between picking and binding).
    Binding to a non-loopback address needs an ``api_key``: llama.cpp's server otherwise
    accepts anyone, from any origin.
    """
    if not is_loopback_host(host) and not api_key:
        raise ValueError(f"refusing to serve on {host!r} without an api_key (loopback is free)")
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
    try:
        root_url = str(engine.listening_address).rstrip("/")
        server = LocalServer(
            base_url=root_url + "/v1",
            root_url=root_url,
            model=SMOLLM2_MODEL_ID,
            api_key=api_key,
            startup_seconds=0.0,
        )
        _wait_until_ready(server, ready_timeout_s)
        yield dataclasses.replace(server, startup_seconds=time.perf_counter() - started)
    finally:
        # xllamacpp stops the HTTP listener and the engine when the object is freed
        del engine
        gc.collect()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted: a quick offline OpenAI-compatible endpoint for trying assay."""
    parser = argparse.ArgumentParser(
        prog="python -m assay.models.local_server",
        description="Serve the embedded SmolLM2 smoke-test model as an OpenAI-compatible API.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    args = parser.parse_args(argv)
    with serve_local_model(
        host=args.host, port=args.port, api_key=args.api_key, threads=args.threads
    ) as server:
        print(f"serving {server.model} at {server.base_url} (Ctrl+C stops)")
        print(SMOKE_TEST_NOTICE)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
