"""What a filter is: the contract every filter keeps, its params base, and its errors.

A filter turns a task's raw model responses into the values its metrics compare, the way
lm-evaluation-harness does: ``apply(resps, docs)`` gets one entry per doc (the list of that
doc's repeats, or whatever the previous pipeline step left there) and returns one entry per
doc, in the same order. Keeping this contract identical to lm-eval's is what lets real task
YAMLs (and their quirks, such as ``map`` after ``take_first`` walking a string's characters)
give the same filtered outputs here as there.

Two error types, because they are found at different times and reported differently:
``FilterConfigError`` when a ``filter_list`` step is built (unknown filter, bad kwargs; the
config loader adds the file and key), ``FilterError`` when a built filter meets a response
or doc it cannot handle (the message names the doc and, in a pipeline, the step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from assay.registry import UnknownNameError


@runtime_checkable
class Filter(Protocol):
    """One built filter step: one entry per doc in, one entry per doc out, same order."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]: ...


class FilterParams(BaseModel):
    """Base of the built-in filters: the model's fields are the step's kwargs.

    A built-in filter is a pydantic model whose fields are its kwargs and which has an
    ``apply`` method, so one class gives the kwargs' types and defaults, their validation
    (unknown kwargs are rejected, as lm-eval's constructors reject them) and the JSON
    Schema. Third-party filters may subclass it too, or be any callable taking keyword
    arguments that returns an object with ``apply``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class FilterConfigError(ValueError):
    """A ``filter_list`` step cannot be built: unknown filter, or unknown, missing or
    mistyped kwargs. ``filter_name`` and ``kwarg`` (the first offending one) let a config
    loader point at the exact key."""

    def __init__(
        self, message: str, *, filter_name: str | None = None, kwarg: str | None = None
    ) -> None:
        super().__init__(message)
        self.filter_name = filter_name
        self.kwarg = kwarg


class UnknownFilterError(UnknownNameError, FilterConfigError):
    """No filter registered under that name; the message says "did you mean"."""


class FilterError(ValueError):
    """A built filter could not process a response or a doc (the message says which)."""


def describe(value: object) -> str:
    """A short description of a value for error messages (type and a clipped repr)."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def responses_of(entry: Any, name: str, index: int) -> Any:
    """A doc's entry to iterate over; a string iterates its characters, as in lm-eval (a
    step after ``take_first`` sees one string per doc)."""
    try:
        iter(entry)
    except TypeError:
        raise FilterError(
            f"{name}: doc {index} holds {describe(entry)}, not a list of responses"
        ) from None
    return entry


def require_text(name: str, resp: object, doc: int, repeat: int) -> str:
    """``resp`` if it is text, else a ``FilterError`` naming the doc and the response."""
    if not isinstance(resp, str):
        raise FilterError(f"{name}: doc {doc} response {repeat} is {describe(resp)}, not text")
    return resp
