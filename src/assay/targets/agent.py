"""Agents and workflows: objects with an async ``generate`` (agent) or ``run`` (workflow).

Any object with those methods qualifies (a protocol, not a base class), so an application's
own agent class is a target without adapters. The method receives the item's ``input``.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

from assay.targets.base import TargetOutput, describe, jsonable
from assay.types import Item, TargetSpec


@runtime_checkable
class Agent(Protocol):
    async def generate(self, input: Any) -> Any: ...


@runtime_checkable
class Workflow(Protocol):
    async def run(self, input: Any) -> Any: ...


class _MethodTarget:
    kind: Any = "agent"
    method = "generate"

    def __init__(self, obj: Any, *, ref: str | None = None) -> None:
        if not callable(getattr(obj, self.method, None)):
            raise TypeError(f"{self.kind} target {obj!r} has no {self.method}() method")
        self.obj = obj
        self._spec = TargetSpec(kind=self.kind, label=ref or describe(obj), ref=ref)

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    async def execute(self, item: Item) -> TargetOutput:
        value = getattr(self.obj, self.method)(item.input)
        if inspect.isawaitable(value):
            value = await value
        return TargetOutput(jsonable(value))


class AgentTarget(_MethodTarget):
    """``await agent.generate(item.input)``."""

    kind = "agent"
    method = "generate"


class WorkflowTarget(_MethodTarget):
    """``await workflow.run(item.input)``."""

    kind = "workflow"
    method = "run"
