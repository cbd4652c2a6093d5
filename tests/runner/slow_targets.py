"""Importable targets for the kill-and-resume test (run by a child process by import path)."""

from __future__ import annotations

import asyncio
import os


async def slow_upper(text: str) -> str:
    """Upper-cases after a short sleep; logs each call to ``$ASSAY_TEST_CALL_LOG``."""
    log = os.environ.get("ASSAY_TEST_CALL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    await asyncio.sleep(0.004)
    return text.upper()


async def hang_on_rome(text: str) -> str:
    """Upper-cases, except that the item "rome" never answers (for timeout tests)."""
    if text == "rome":
        await asyncio.sleep(3600)
    return text.upper()


async def slower_upper(text: str) -> str:
    """Upper-cases after 50 ms: a run long enough to be resumed twice at once."""
    await asyncio.sleep(0.05)
    return text.upper()
