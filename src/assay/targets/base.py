"""The target protocol: one async call per item, raising on failure.

Targets raise; the runner turns the exception into the item's ``TargetError`` so that one
failing item never stops a run (errors are data, but only the runner decides where they go).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from assay.types import Item, TargetSpec


@dataclass(frozen=True, slots=True)
class TargetOutput:
    """What a target produced for one item, plus anything worth a warning."""

    output: Any
    warnings: tuple[str, ...] = ()


@runtime_checkable
class Target(Protocol):
    """Anything with a ``spec`` (how runs describe it) and an async ``execute``."""

    @property
    def spec(self) -> TargetSpec: ...

    async def execute(self, item: Item) -> TargetOutput: ...


_PLAIN = (str, int, float, bool, type(None))


def jsonable(value: Any) -> Any:
    """``value`` as JSON-shaped data (what the store keeps and scorers receive).

    Pydantic models and dataclasses become dicts; anything unknown becomes its ``repr`` rather
    than failing the item after the target already did its work.
    """
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable_python(dataclasses.asdict(value), fallback=repr)
    return to_jsonable_python(value, fallback=repr)


def describe(obj: Any) -> str:
    """A short label for an object given directly (no import path)."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}.{name}"
