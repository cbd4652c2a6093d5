"""Fixtures of the model-layer tests: a real mock server on loopback, isolated globals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.models.openai_compat import reset_structured_output_memory
from assay.models.providers import reset_resolved_models
from assay.models.reliability import reset_limiters
from assay.testing.openai_server import MockOpenAIServer


@pytest.fixture(autouse=True)
def _isolated_model_globals(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Every test gets fresh per-endpoint memories and its own default cache file."""
    reset_structured_output_memory()
    reset_limiters()
    reset_resolved_models()
    monkeypatch.setenv("ASSAY_CACHE_PATH", str(tmp_path / "default-cache.db"))
    monkeypatch.delenv("ASSAY_CACHE", raising=False)
    yield
    reset_structured_output_memory()
    reset_limiters()
    reset_resolved_models()


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as running:
        yield running
