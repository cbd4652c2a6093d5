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


_ungated_calls = 0


async def gated_upper(text: str) -> str:
    """Upper-cases after 20 ms; past the first 8 calls of this process, only once the file
    ``$ASSAY_TEST_GATE`` exists: a run that stays in progress for as long as a test needs,
    however loaded the machine (a timed run can finish before a slow CLI call returns).
    Waits at most 10 minutes."""
    global _ungated_calls
    await asyncio.sleep(0.02)
    gate = os.environ.get("ASSAY_TEST_GATE")
    _ungated_calls += 1
    if gate and _ungated_calls > 8:
        for _ in range(6000):
            if os.path.exists(gate):
                break
            await asyncio.sleep(0.1)
    return text.upper()
