"""Test doubles users need too, and evals as tests.

- ``ScriptedModel`` is right for testing scorer logic; the mock server
  (``assay.testing.openai_server``) is a real HTTP server on loopback for testing the
  OpenAI-compatible client path end to end.
- ``assert_score`` (one case against a limit), ``cases`` (a dataset's items as pytest
  parameters) and the ``assay_eval`` fixture of the pytest plugin (``assay_pytest``; the
  ``AssayEval`` class) make evals pytest tests. They are imported on first use, so
  ``import assay`` does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.testing.scripted import ScriptedModel

if TYPE_CHECKING:
    from assay.testing.assertions import CaseVerdict, assert_score
    from assay.testing.case_params import cases
    from assay.testing.evaluate import AssayEval, EvalReport

_LAZY = {
    "assert_score": "assay.testing.assertions",
    "CaseVerdict": "assay.testing.assertions",
    "cases": "assay.testing.case_params",
    "AssayEval": "assay.testing.evaluate",
    "EvalReport": "assay.testing.evaluate",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["AssayEval", "CaseVerdict", "EvalReport", "ScriptedModel", "assert_score", "cases"]
