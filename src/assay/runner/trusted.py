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
    return construct_named(cls, values)


def construct_named(cls: type[M], values: dict[str, Any]) -> M:
    """``construct`` for a caller whose ``values`` name every field by construction (a dict
    literal): the key check costs a third of ``construct`` (comparing 15 keys with the
    field set), so the runner's one call site is checked by its tests instead
    (``tests/runner/test_trusted.py`` compares a run's results with the model's fields).
    ``cls`` must still pass ``construct``'s model checks (no private attributes, no extra
    fields, no post-init)."""
    fields = _fields_of(cls)
    instance = cls.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance
