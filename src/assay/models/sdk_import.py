"""Import the ``openai`` SDK in a background thread as soon as a run knows it will need it.

Why: importing the SDK takes 0.4–1.0 s of CPU (it loads every API type). Done on the first
judge call, it happens on the event loop, so no request goes out (and no target runs) until
it is over. A judge model string is known when the scorer is built, and an
``OpenAICompatibleModel`` when it is made, usually well before the first judge call (a run
with a target calls the target first, and waiting on the target leaves the loop idle): the
import then runs while the run is doing other things.

Safety: the first user of the SDK calls ``wait_for_openai()`` before importing from it, so
the SDK is never imported by two threads of ours at once; a failed background import is
silent here (the call that needs the SDK imports it again and reports the error).
"""

from __future__ import annotations

import sys
import threading

OPENAI_PREFIXES = frozenset(
    {
        "openai",
        "ollama",
        "vllm",
        "lmstudio",
        "openrouter",
        "together",
        "groq",
        "anthropic",
        "google",
        "gemini",
        "openai-compatible",
    }
)
"""Model-string prefixes whose built-in provider talks through the SDK (the keys of
``assay.models.providers.PROVIDERS``; a test keeps the two equal)."""

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import_openai() -> None:
    try:
        import openai.types.chat  # noqa: F401 - loads the package and its chat types
    except Exception:  # reported by the call that needs the SDK
        return


def start_openai_import() -> None:
    """Start importing the SDK in a daemon thread, once per process (no-op once loaded)."""
    global _thread
    if "openai.types.chat" in sys.modules:
        return
    with _lock:
        if _thread is None:
            _thread = threading.Thread(
                target=_import_openai, name="assay-openai-import", daemon=True
            )
            _thread.start()


def start_import_for(prefix: str) -> None:
    """``start_openai_import`` when a model string's ``prefix`` is an SDK provider's."""
    if prefix in OPENAI_PREFIXES:
        start_openai_import()


def wait_for_openai() -> None:
    """Let a background import finish before this thread imports from the SDK."""
    thread = _thread
    if thread is not None and thread.is_alive() and thread is not threading.current_thread():
        thread.join()
