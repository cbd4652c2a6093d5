"""Trusted construction of the runner's result models, without pydantic's per-field work.

Why: the runner builds one ``ItemResult`` per item from parts that were validated where
they came in (the item at load time, the target's output by ``target_output``, each score by
the scorer that returned it). Validating them again cost more than the rest of the runner's
bookkeeping, and even ``model_construct`` walks every field with its aliases and defaults
(≈ 10 µs per result). ``construct`` sets the fields directly, like ``model_construct`` does
at its end, but only for a dict that names every field of a model without validators that
run after construction: anything else raises, so no field can silently be missing.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_CHECKED: dict[type[BaseModel], frozenset[str]] = {}


def _fields_of(cls: type[BaseModel]) -> frozenset[str]:
    fields = _CHECKED.get(cls)
    if fields is None:
        if cls.__pydantic_post_init__ or cls.__private_attributes__ or cls.__pydantic_root_model__:
            raise TypeError(f"{cls.__name__} needs pydantic's own construction")
        if cls.model_config.get("extra") == "allow":
            raise TypeError(f"{cls.__name__} allows extra fields; construct it with pydantic")
        fields = _CHECKED[cls] = frozenset(cls.model_fields)
    return fields


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (every field, already valid) as they are."""
    fields = _fields_of(cls)
    if values.keys() != fields:
        missing = sorted(fields - values.keys())
        extra = sorted(values.keys() - fields)
        raise TypeError(f"{cls.__name__}: missing fields {missing}, unknown fields {extra}")
    instance = cls.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance
