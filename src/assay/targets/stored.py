"""No target: score the output each item already carries (pre-generated outputs)."""

from __future__ import annotations

from assay.targets.base import TargetOutput
from assay.types import Item, TargetSpec


class MissingOutputError(ValueError):
    """An item has no stored output and the run has no target to produce one."""


class StoredOutputTarget:
    """Returns ``item.output``; an item without one is that item's error."""

    _SPEC = TargetSpec(kind="stored-output", label="stored outputs")

    @property
    def spec(self) -> TargetSpec:
        return self._SPEC

    async def execute(self, item: Item) -> TargetOutput:
        if item.output is None:
            raise MissingOutputError(
                f"item {item.id!r} has no 'output' and the run has no target to produce one"
            )
        return TargetOutput(item.output)
