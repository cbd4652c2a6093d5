"""Optional libraries in tests: a developer without an extra may skip what needs it, CI may
not (the dev extra installs every one, so a missing library there is a failure)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def required_module(name: str) -> ModuleType:
    """``name`` imported; outside CI a missing module skips the test (or module) instead."""
    if os.environ.get("CI"):
        return importlib.import_module(name)
    return pytest.importorskip(name)
