"""Without a judge endpoint configured, judge with a mock judge on loopback (offline)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def judge_endpoint() -> Iterator[None]:
    if os.environ.get("ASSAY_BASE_URL"):
        yield  # a real (or the caller's) OpenAI-compatible endpoint
        return
    from judge import mock_reply

    from assay.testing.openai_server import MockOpenAIServer

    with MockOpenAIServer(responder=mock_reply) as server:
        os.environ["ASSAY_BASE_URL"] = server.base_url
        try:
            yield
        finally:
            del os.environ["ASSAY_BASE_URL"]
