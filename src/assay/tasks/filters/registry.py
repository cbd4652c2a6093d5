"""The filter registry (``FILTERS``, entry-point group ``assay.filters``) and step building.

A ``FilterType`` is a name, a one-line description and a factory: any callable that takes
a ``filter_list`` step's kwargs as keyword arguments and returns a fresh filter (an object
with ``apply(resps, docs)``). The built-ins are ``FilterParams`` models, so their kwargs are
typed and validated; a plain class with an ``__init__(**kwargs)`` (lm-eval's style) works
too, with its kwargs checked against its signature.

``build_filter`` is the one way to turn a step into a filter. It raises
``FilterConfigError`` naming the filter and the unknown, missing or mistyped kwarg, so a
task config can be checked (``validate_filter_step``) before any model is called. A step's
function may also be a callable instead of a name: lm-eval YAMLs write
``function: !function utils.ExtractChoiceFilter`` for task-local filters.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, TypeVar

from pydantic import BaseModel, ValidationError

from assay.registry import Registry
from assay.tasks.filters.base import Filter, FilterConfigError, UnknownFilterError, describe

ENTRY_POINT_GROUP = "assay.filters"
BUILTIN_MODULES = (
    "assay.tasks.filters.selection",
    "assay.tasks.filters.extraction",
    "assay.tasks.filters.multi_choice",
    "assay.tasks.filters.transformation",
    "assay.tasks.filters.custom",
)

FilterFactory = Callable[..., Any]
"""Called with a step's kwargs as keyword arguments; returns an object with ``apply``."""

F = TypeVar("F", bound=FilterFactory)


@dataclass(frozen=True, slots=True)
class FilterType:
    """A registered filter: its name, a one-line description and its factory."""

    name: str
    description: str
    factory: FilterFactory
    aliases: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        name: str,
        factory: FilterFactory,
        *,
        description: str | None = None,
        aliases: Iterable[str] = (),
    ) -> FilterType:
        """A filter type for ``factory``; the description defaults to its docstring's
        first line (plugins can expose the result through their entry point)."""
        if not callable(factory):
            raise TypeError(f"filter {name!r}: the factory must be callable, got {factory!r}")
        if description is None:
            doc = inspect.getdoc(factory) or ""
            description = doc.strip().splitlines()[0] if doc.strip() else ""
        return cls(name=name, description=description, factory=factory, aliases=tuple(aliases))

    def build(self, kwargs: Mapping[str, Any] | None = None) -> Filter:
        """A fresh filter for one pipeline run; bad kwargs raise ``FilterConfigError``."""
        given = _kwargs_dict(self.name, kwargs)
        if isinstance(self.factory, type) and issubclass(self.factory, BaseModel):
            try:
                built: object = self.factory.model_validate(given)
            except ValidationError as exc:
                raise _params_error(self.name, self.factory, exc) from None
        else:
            _check_signature(self.name, self.factory, given)
            try:
                built = self.factory(**given)
            except Exception as exc:  # a constructor that rejects its kwargs
                raise FilterConfigError(
                    f"filter {self.name!r} rejected its kwargs: {type(exc).__name__}: {exc}",
                    filter_name=self.name,
                ) from exc
        if not callable(getattr(built, "apply", None)):
            raise FilterConfigError(
                f"filter {self.name!r}: its factory returned {describe(built)}, which has no "
                "apply(resps, docs) method",
                filter_name=self.name,
            )
        return built  # type: ignore[return-value]  # checked above: it has apply()

    def params_schema(self) -> dict[str, Any] | None:
        """The kwargs as JSON Schema when the factory is a ``FilterParams`` model."""
        if isinstance(self.factory, type) and issubclass(self.factory, BaseModel):
            return self.factory.model_json_schema()
        return None


def _is_filter_type(obj: object) -> TypeGuard[FilterType]:
    return isinstance(obj, FilterType)


def _name(filter_type: FilterType) -> str:
    return filter_type.name


def _aliases(filter_type: FilterType) -> tuple[str, ...]:
    return filter_type.aliases


FILTERS: Registry[FilterType] = Registry(
    "filter",
    accepts=_is_filter_type,
    group=ENTRY_POINT_GROUP,
    builtins=BUILTIN_MODULES,
    name_of=_name,
    aliases_of=_aliases,
    unknown_error=UnknownFilterError,
)
"""Every filter (rules: ``assay.registry``). Built-ins load on first use; plugins come from
the entry-point group ``assay.filters`` (a ``FilterType``, a list of them, or a module that
calls ``register_filter`` when imported) and never replace a built-in."""


def register_filter(
    name: str,
    *,
    description: str | None = None,
    aliases: Iterable[str] = (),
    replace: bool = False,
) -> Callable[[F], F]:
    """Decorator registering a filter factory (a class or function) under ``name``.

    The factory is called with a step's kwargs and must return an object with
    ``apply(resps, docs)``. A taken name raises unless ``replace``.
    """

    def decorate(factory: F) -> F:
        FILTERS.register(
            FilterType.of(name, factory, description=description, aliases=aliases),
            replace=replace,
        )
        return factory

    return decorate


def build_filter(function: str | FilterFactory, kwargs: Mapping[str, Any] | None = None) -> Filter:
    """A fresh filter for one ``filter_list`` step.

    ``function`` is a registered name (unknown names get a "did you mean") or a callable
    factory (a YAML ``!function`` already resolved). Raises ``FilterConfigError``.
    """
    if isinstance(function, str):
        return FILTERS.get(function).build(kwargs)
    if callable(function):
        label = getattr(function, "__qualname__", None) or type(function).__name__
        return FilterType.of(str(label), function).build(kwargs)
    raise FilterConfigError(
        f"a filter step's function must be a filter name or a callable, got {describe(function)}"
    )


def validate_filter_step(
    function: str | FilterFactory, kwargs: Mapping[str, Any] | None = None
) -> None:
    """Check that a step builds (name known, kwargs valid) without running it."""
    build_filter(function, kwargs)


# ------------------------------------------------------------------------- kwarg checks
def _kwargs_dict(name: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping):
        raise FilterConfigError(
            f"filter {name!r}: kwargs must be a mapping, got {describe(kwargs)}",
            filter_name=name,
        )
    for key in kwargs:
        if not isinstance(key, str):
            raise FilterConfigError(
                f"filter {name!r}: kwarg names must be strings, got {describe(key)}",
                filter_name=name,
            )
    return dict(kwargs)


def _unknown_kwarg(name: str, key: str, accepted: Iterable[str]) -> str:
    accepted = sorted(accepted)
    close = difflib.get_close_matches(key, accepted, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    known = f" (accepted: {', '.join(accepted)})" if accepted else " (it takes no kwargs)"
    return f"unknown kwarg {key!r}{hint}{known}"


def _params_error(name: str, model: type[BaseModel], exc: ValidationError) -> FilterConfigError:
    problems: list[str] = []
    first: str | None = None
    for error in exc.errors():
        loc = error.get("loc") or ()
        key = str(loc[0]) if loc else None
        first = first or key
        kind = error.get("type")
        if kind == "extra_forbidden" and key is not None:
            problems.append(_unknown_kwarg(name, key, model.model_fields))
        elif kind == "missing" and key is not None:
            problems.append(f"missing required kwarg {key!r}")
        else:
            message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
            where = f"kwarg {key!r}" if key is not None else "kwargs"
            problems.append(f"{where}: {message} (got {describe(error.get('input'))})")
    return FilterConfigError(
        f"filter {name!r}: " + "; ".join(problems), filter_name=name, kwarg=first
    )


def _check_signature(name: str, factory: FilterFactory, given: Mapping[str, Any]) -> None:
    """Unknown and missing kwargs of a plain factory, named before it is called."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no introspectable signature: let the call decide
        return
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    keywords = {
        p.name: p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    for key in given:
        if key not in keywords:
            raise FilterConfigError(
                f"filter {name!r}: " + _unknown_kwarg(name, key, keywords),
                filter_name=name,
                kwarg=key,
            )
    for key, param in keywords.items():
        if param.default is inspect.Parameter.empty and key not in given:
            raise FilterConfigError(
                f"filter {name!r}: missing required kwarg {key!r}", filter_name=name, kwarg=key
            )
