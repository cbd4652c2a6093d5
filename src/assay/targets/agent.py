"""Agents and workflows: objects with an async ``generate`` (agent) or ``run`` (workflow).

Any object with those methods qualifies (a protocol, not a base class), so an application's
own agent class is a target without adapters. The method receives the item's ``input``.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

from assay.targets.base import (
    OutputKey,
    TargetOutput,
    describe,
    output_key_config,
    target_output,
)
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

    def __init__(
        self, obj: Any, *, ref: str | None = None, output_key: OutputKey | None = None
    ) -> None:
        if not callable(getattr(obj, self.method, None)):
            raise TypeError(f"{self.kind} target {obj!r} has no {self.method}() method")
        self.obj = obj
        self.output_key = output_key
        self._spec = TargetSpec(
            kind=self.kind,
            label=ref or describe(obj),
            ref=ref,
            config=output_key_config(output_key),
        )

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    async def execute(self, item: Item) -> TargetOutput:
        value = getattr(self.obj, self.method)(item.input)
        if inspect.isawaitable(value):
            value = await value
        return target_output(value, output_key=self.output_key)


class AgentTarget(_MethodTarget):
    """``await agent.generate(item.input)``."""

    kind = "agent"
    method = "generate"


class WorkflowTarget(_MethodTarget):
    """``await workflow.run(item.input)``."""

    kind = "workflow"
    method = "run"
