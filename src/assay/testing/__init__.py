"""Test doubles users need too: a scripted model, a mock OpenAI-compatible server, and
builders for the reference's test runs and messages.

``ScriptedModel`` is right for testing scorer logic; the mock server is a real HTTP server
on loopback for testing the OpenAI-compatible client path end to end.
"""

from assay.testing.scripted import ScriptedModel

__all__ = ["ScriptedModel"]
