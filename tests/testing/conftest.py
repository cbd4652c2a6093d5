"""Fixtures of the test-double tests: the model layer's isolated globals and mock server."""

from tests.models.conftest import _isolated_model_globals, server

__all__ = ["_isolated_model_globals", "server"]
