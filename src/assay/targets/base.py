"""The target protocol: one async call per item, raising on failure.

Targets raise; the runner turns the exception into the item's ``TargetError`` so that one
failing item never stops a run (errors are data, but only the runner decides where they go).

A target's answer is a ``TargetOutput``: the output scorers see, plus what it cost (``usage``
tokens and ``cost_usd``) and, when it drew several, its ``samples``. Functions, agents and
workflows may return one (or an object with the same attributes, or a dict with an
``output`` key and any of ``usage``/``cost_usd``/``samples``/``warnings``); anything else is
the output itself. ``output_key`` picks the output out of an object the target returns: a
dotted path (``"answer"``, ``"choices.0.text"``) or a function of the returned value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from assay.types import Item, TargetSpec, Usage


@dataclass(frozen=True, slots=True)
class TargetOutput:
    """What a target produced for one item, plus anything worth a warning.

    ``usage``/``cost_usd``: the tokens and money the target spent on it (a model prompt
    target fills them from the model's answer); ``samples``: every sample when the target
    drew several (``output`` is the one scored, normally the first).
    """

    output: Any
    warnings: tuple[str, ...] = ()
    usage: Usage | None = None
    cost_usd: float | None = None
    samples: list[Any] | None = None


OutputKey = str | Callable[[Any], Any]
"""How to find the output in what a target returns: a dotted path or a function."""

ENVELOPE_KEYS = frozenset({"output", "usage", "cost_usd", "samples", "warnings"})
"""The keys of a dict that is a ``TargetOutput`` (it must have ``output`` and one more)."""


class OutputKeyError(ValueError):
    """``output_key`` does not lead anywhere in what the target returned."""


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


def as_usage(value: Any) -> Usage | None:
    """Token usage from a ``Usage``, a dict or an object with ``input_tokens``/
    ``output_tokens`` (or OpenAI's ``prompt_tokens``/``completion_tokens``); ``None`` stays."""
    if value is None or isinstance(value, Usage):
        return value
    data = value if isinstance(value, Mapping) else jsonable(value)
    if not isinstance(data, Mapping):
        raise TypeError(f"target usage must be a mapping of token counts, got {value!r}")
    fields = {
        "input_tokens": data.get("input_tokens", data.get("prompt_tokens")),
        "output_tokens": data.get("output_tokens", data.get("completion_tokens")),
        "total_tokens": data.get("total_tokens"),
        "reasoning_tokens": data.get("reasoning_tokens"),
        "cached_input_tokens": data.get("cached_input_tokens"),
    }
    try:
        return Usage.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValueError as exc:
        raise TypeError(f"target usage {dict(data)!r} is not a mapping of token counts") from exc


def _is_envelope(value: Any) -> bool:
    if isinstance(value, TargetOutput):
        return True
    if isinstance(value, Mapping):
        keys = set(value)
        return "output" in keys and len(keys) > 1 and keys <= ENVELOPE_KEYS
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return False
    return hasattr(value, "output") and any(
        hasattr(value, name) for name in ("usage", "cost_usd", "samples")
    )


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def pick_output(value: Any, key: OutputKey) -> Any:
    """``value`` at ``key``: a function's result, or a dotted path through mappings,
    sequences (integer steps) and attributes. A missing step raises ``OutputKeyError``
    naming the path and what was there instead."""
    if callable(key):
        return key(value)
    current = value
    walked: list[str] = []
    for step in key.split("."):
        if isinstance(current, Mapping) and step in current:
            current = current[step]
        elif (
            isinstance(current, Sequence)
            and not isinstance(current, str | bytes)
            and step.lstrip("-").isdigit()
            and -len(current) <= int(step) < len(current)
        ):
            current = current[int(step)]
        elif not isinstance(current, Mapping | Sequence) and hasattr(current, step):
            current = getattr(current, step)
        else:
            where = f"at {'.'.join(walked)!r}" if walked else "in the target's output"
            if isinstance(current, Mapping):
                found = f"a dict with keys {sorted(map(str, current))[:20]}"
            else:
                found = f"a {type(current).__name__}"
            raise OutputKeyError(f"output_key {key!r}: no {step!r} {where} (found {found})")
        walked.append(step)
    return current


def target_output(value: Any, *, output_key: OutputKey | None = None) -> TargetOutput:
    """What a function, agent or workflow returned, as a ``TargetOutput`` (see the module
    docstring). With ``output_key`` the output is picked out of the returned object, and a
    ``usage``/``cost_usd`` next to it (a returned dict's own keys) is read as the target's
    usage."""
    if _is_envelope(value):
        warnings = _field(value, "warnings") or ()
        samples = _field(value, "samples")
        cost = _field(value, "cost_usd")
        produced = TargetOutput(
            _field(value, "output"),
            tuple(str(w) for w in warnings),
            usage=as_usage(_field(value, "usage")),
            cost_usd=None if cost is None else float(cost),
            samples=None if samples is None else list(samples),
        )
    else:
        produced = TargetOutput(value)
    output = produced.output
    if output_key is not None:
        raw = output
        output = pick_output(raw, output_key)
        if produced.usage is None and produced.cost_usd is None and isinstance(raw, Mapping):
            cost = raw.get("cost_usd")
            produced = dataclasses.replace(
                produced,
                usage=as_usage(raw.get("usage")),
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
            )
    samples = produced.samples
    return dataclasses.replace(
        produced,
        output=jsonable(output),
        samples=None if samples is None else [jsonable(s) for s in samples],
    )


def output_key_config(output_key: OutputKey | None) -> dict[str, Any]:
    """How a target's spec records its ``output_key``: a path as is, a function as its
    import path ``module:qualname`` (so ``runs resume`` can re-create both; a lambda or a
    local function cannot be, and resume asks for the target again)."""
    if output_key is None:
        return {}
    if isinstance(output_key, str):
        return {"output_key": output_key}
    module = getattr(output_key, "__module__", None) or type(output_key).__module__
    name = getattr(output_key, "__qualname__", None) or type(output_key).__qualname__
    return {"output_fn": f"{module}:{name}"}
