"""Run hooks: user code called at run start/end and item start/complete.

Hooks may be sync or async. A hook that raises stops the run (status ``failed``): a hook is
the caller's own code, and a silently ignored failure there would hide a bug.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.types import Item, ItemResult, RunInfo, RunStatus, RunSummary

Hook = Callable[..., Any]


@dataclass(frozen=True)
class RunHooks:
    on_run_start: Hook | None = None
    """``(info: RunInfo)``"""
    on_run_end: Hook | None = None
    """``(info: RunInfo, status: RunStatus, summary: RunSummary)``"""
    on_item_start: Hook | None = None
    """``(item: Item, repeat: int)``"""
    on_item_complete: Hook | None = None
    """``(result: ItemResult)``"""

    async def run_start(self, info: RunInfo) -> None:
        await _call(self.on_run_start, info)

    async def run_end(self, info: RunInfo, status: RunStatus, summary: RunSummary) -> None:
        await _call(self.on_run_end, info, status, summary)

    async def item_start(self, item: Item, repeat: int) -> None:
        await _call(self.on_item_start, item, repeat)

    async def item_complete(self, result: ItemResult) -> None:
        await _call(self.on_item_complete, result)

    @property
    def has_item_hooks(self) -> bool:
        return self.on_item_start is not None or self.on_item_complete is not None


async def _call(hook: Hook | None, *args: Any) -> None:
    if hook is None:
        return
    value = hook(*args)
    if inspect.isawaitable(value):
        await value
