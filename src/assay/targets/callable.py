"""A Python function (sync or async) as the target.

The function receives the item's ``input`` as its first argument. It may also declare any of
``expected_output``, ``context``, ``metadata`` or ``item`` as parameters and receives those by
keyword: a plain ``def answer(question)`` works, and a function that needs more asks for it.
Sync functions run on the worker threads of ``assay.targets.callable_pool`` (daemon threads
fed in batches, so one that hangs past the run's timeout is abandoned without blocking
anything, and a fast function costs a few microseconds rather than a thread hop per item)
so a blocking call cannot stall the other items.

The function may return the output, or a ``TargetOutput`` (or a dict with ``output`` and
``usage``/``cost_usd``/``samples``) to report what it spent; ``output_key`` picks the output
out of an object it returns (see ``assay.targets.base``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from assay.targets.base import (
    OutputKey,
    TargetOutput,
    describe,
    output_key_config,
    target_output,
)
from assay.targets.callable_pool import TARGET_POOL
from assay.types import Item, TargetSpec

_KEYWORDS = ("expected_output", "context", "metadata", "item")
_PLAIN = (str, int, float, bool, type(None))


class CallableTarget:
    """Wraps ``fn``; ``ref`` is its import path when it came from one (needed for resume);
    ``output_key`` finds the output in what ``fn`` returns (a dotted path or a function)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        ref: str | None = None,
        output_key: OutputKey | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"target {fn!r} is not callable")
        self.fn = fn
        self.output_key = output_key
        self._spec = TargetSpec(
            kind="callable",
            label=ref or describe(fn),
            ref=ref,
            config=output_key_config(output_key),
        )
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
        )
        self._keywords, self._positional = _inspect_parameters(fn)

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    def _arguments(self, item: Item) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs = {name: item if name == "item" else getattr(item, name) for name in self._keywords}
        args = (item.input,) if self._positional else ()
        return args, kwargs

    async def execute(self, item: Item) -> TargetOutput:
        if self._keywords:
            args, kwargs = self._arguments(item)
        else:  # the common ``def answer(question)``: no per-item dict
            args, kwargs = ((item.input,) if self._positional else ()), {}
        if self._is_async:
            value = await self.fn(*args, **kwargs)
        else:
            value = await TARGET_POOL.run(self.fn, *args, **kwargs)
            if type(value) not in _PLAIN and inspect.isawaitable(value):  # skip the ABC walk
                value = await value
        if self.output_key is None and type(value) in _PLAIN:
            return TargetOutput(value)  # already JSON-shaped, no envelope: nothing to convert
        return target_output(value, output_key=self.output_key)


def _inspect_parameters(fn: Callable[..., Any]) -> tuple[tuple[str, ...], bool]:
    """Which item fields ``fn`` asks for by name, and whether it takes the input positionally."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: input only
        return (), True
    names = {p.name for p in parameters}
    keywords = tuple(name for name in _KEYWORDS if name in names)
    rest = [p for p in parameters if p.name not in keywords]
    positional = any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in rest
    )
    return keywords, positional
