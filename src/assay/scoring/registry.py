"""The scorer registry: typed, validated scorer types that the CLI, API and UI generate from.

A scorer type is a factory plus metadata: a kebab-case type id, a label, a description, a
pydantic params model (defaults included), the score direction and range, and its kind.
Every scorer type, code or judge, is declared the same way: ``@register_scorer(type_id,
label=..., params=...)`` on its factory (``build(params) -> Scorer``) or on a declaration
class (a ``JudgeScorer`` subclass, see ``ScorerDeclaration``). Third-party packages expose
scorer types (or modules that register them) through the entry-point group
``assay.scorers``. The registry itself is an ``assay.registry.Registry`` (``SCORER_TYPES``):
its rules for names, aliases, duplicates and plugins are the same as every other
registry's.

Three words that are easy to mix up:

- ``type`` (``type_id`` on ``ScorerType`` and ``Scorer``): the registered id,
  ``"faithfulness"``; what a ``ScorerConfig`` names.
- ``kind``: what computes the score: ``code`` (a deterministic function), ``judge`` (an LLM
  judge), ``check`` (a pass/fail assertion).
- ``mode``: ``async`` (it waits on a model) or ``sync``; derived from ``kind`` (judge
  scorers are ``async``), never declared separately.

Params accept snake_case names and the reference's camelCase aliases
(``ignore_case`` / ``ignoreCase``); unknown params are rejected with a "did you mean".
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeGuard, TypeVar, cast, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from assay.extras import EXTRAS, require_extra
from assay.registry import DuplicateNameError, Registry, RegistryError, UnknownNameError
from assay.scoring.scorer import Scorer
from assay.types import normalize_score

ENTRY_POINT_GROUP = "assay.scorers"
BUILTIN_MODULE = "assay.scorers"

ScorerKind = Literal["code", "judge", "check"]
"""What computes the score: a function, an LLM judge, or a pass/fail check."""

ScorerMode = Literal["sync", "async"]


def mode_of(kind: ScorerKind) -> ScorerMode:
    """A scorer kind's mode: judges wait on a model (``async``), the others do not."""
    return "async" if kind == "judge" else "sync"


class ScorerParams(BaseModel):
    """Base class of every scorer type's params model.

    Frozen, unknown keys forbidden, camelCase aliases accepted so the reference's option
    names work unchanged.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )


class NoParams(ScorerParams):
    """For scorer types without parameters."""


P = TypeVar("P", bound=ScorerParams)


@dataclass(frozen=True, slots=True)
class ScorerType(Generic[P]):
    """A registered scorer type."""

    type_id: str
    label: str
    description: str
    params_model: type[P]
    build: Callable[[P], Scorer]
    higher_is_better: bool = True
    score_range: tuple[float, float] = (0.0, 1.0)
    kind: ScorerKind = "code"
    preview_notes: str = ""
    reference: str | None = None
    aliases: tuple[str, ...] = ()
    aggregations: tuple[str, ...] = ("mean",)
    """How runs aggregate this type's scores (names in ``assay.summary.aggregations``)."""
    prompts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """A judge type's built-in texts that params may override (name → text)."""
    extra: str | None = None
    """The install extra this type needs (``"nlp"``: ``pip install 'assay[nlp]'``), checked
    when a scorer is created; ``None``: the core install runs it."""

    def __post_init__(self) -> None:
        if self.extra is not None and self.extra not in EXTRAS:
            raise ValueError(f"scorer {self.type_id!r}: unknown extra {self.extra!r}")

    @property
    def mode(self) -> ScorerMode:
        """``async`` for judge scorers (they wait on a model), else ``sync``."""
        return mode_of(self.kind)

    def normalize(self, score: float, params: ScorerParams | None = None) -> float:
        """``score`` on 0..1 (1 = best) for this type's range (stretched by ``params``)."""
        score_range = self.score_range if params is None else self.range_for(params)
        return normalize_score(score, score_range, higher_is_better=self.higher_is_better)

    def range_for(self, params: ScorerParams) -> tuple[float, float]:
        """The score range, stretched by a ``scale`` param where the type has one."""
        scale = getattr(params, "scale", None)
        if isinstance(scale, int | float) and not isinstance(scale, bool) and scale > 0:
            low, high = self.score_range
            return (low * scale, high * scale)
        return self.score_range

    def params_schema(self) -> dict[str, Any]:
        return self.params_model.model_json_schema(by_alias=False)

    def info(self) -> ScorerTypeInfo:
        return ScorerTypeInfo(
            type=self.type_id,
            label=self.label,
            description=self.description,
            kind=self.kind,
            mode=self.mode,
            higher_is_better=self.higher_is_better,
            score_range=self.score_range,
            params_schema=self.params_schema(),
            preview_notes=self.preview_notes,
            reference=self.reference,
            aliases=list(self.aliases),
            aggregations=list(self.aggregations),
            prompts=dict(self.prompts),
            extra=self.extra,
        )


class ScorerTypeInfo(BaseModel):
    """What ``list_scorers`` reports for one type (JSON-serialisable)."""

    model_config = ConfigDict(frozen=True)

    type: str
    label: str
    description: str
    kind: ScorerKind
    mode: ScorerMode
    """Derived from ``kind`` (see ``ScorerType.mode``)."""
    higher_is_better: bool
    score_range: tuple[float, float]
    params_schema: dict[str, Any]
    preview_notes: str = ""
    reference: str | None = None
    aliases: list[str] = Field(default_factory=list)
    aggregations: list[str] = Field(default_factory=lambda: ["mean"])
    prompts: dict[str, str] = Field(default_factory=dict)
    """A judge type's overridable texts: ``instructions`` and one per judge step."""
    extra: str | None = None
    """The install extra the type needs (``None``: the core install runs it)."""


class ScorerConfig(BaseModel):
    """A configured scorer instance: which type, with which params, how much it weighs."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    weight: float = Field(default=1.0, ge=0.0, le=100.0)
    threshold: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="Pass threshold on this scorer's own scale (>= when higher is better, "
        "<= otherwise); overrides the run's threshold for this scorer.",
    )
    label: str | None = None
    enabled: bool = True
    id: str | None = None


class ScorerRegistryError(RegistryError):
    """Base of registry errors: an unknown type or bad params."""


class UnknownScorerError(ScorerRegistryError, UnknownNameError):
    """No scorer type with that id."""


class DuplicateScorerError(ScorerRegistryError, DuplicateNameError):
    """A scorer type id or alias is registered already (``replace=True`` replaces it)."""


class ScorerParamsError(ScorerRegistryError):
    """Params did not validate; the message names the param and what is allowed."""


def _is_scorer_type(obj: object) -> TypeGuard[ScorerType[Any]]:
    return isinstance(obj, ScorerType)


def _type_id(scorer_type: ScorerType[Any]) -> str:
    return scorer_type.type_id


def _aliases(scorer_type: ScorerType[Any]) -> tuple[str, ...]:
    return scorer_type.aliases


SCORER_TYPES: Registry[ScorerType[Any]] = Registry(
    "scorer type",
    accepts=_is_scorer_type,
    group=ENTRY_POINT_GROUP,
    builtins=(BUILTIN_MODULE,),
    name_of=_type_id,
    aliases_of=_aliases,
    hint=" (see `assay scorers list`)",
    unknown_error=UnknownScorerError,
    duplicate_error=DuplicateScorerError,
)
"""Every scorer type (rules: ``assay.registry``). Built-ins load from ``assay.scorers`` on
first use; plugins from the entry-point group ``assay.scorers`` and never replace a built-in
(a clash is skipped with a warning)."""


def register(scorer_type: ScorerType[Any], *, replace: bool = False) -> ScorerType[Any]:
    """Add a scorer type. Registering an existing id or alias raises unless ``replace``."""
    return SCORER_TYPES.register(scorer_type, replace=replace)


def unregister(type_id: str) -> None:
    """Remove a scorer type and its aliases (for tests and plugin reloads)."""
    SCORER_TYPES.unregister(type_id)


@dataclass(frozen=True, slots=True)
class DeclaredScorer:
    """What a declaration class hands ``register_scorer``: its factory and the metadata it
    derives (a judge derives its kind, its description from its docstring, its prompts)."""

    build: Callable[[Any], Scorer]
    kind: ScorerKind
    description: str
    prompts: Mapping[str, str]
    higher_is_better: bool
    score_range: tuple[float, float]
    reference: str | None
    preview_notes: str


class ScorerDeclaration(Protocol):
    """A class ``register_scorer`` can decorate: it turns the decorator's arguments into a
    factory plus metadata (``assay.scorers._lib.judge_scorer.JudgeScorer`` is one). The
    registry knows only this hook, so the scoring room does not import the scorers room."""

    @classmethod
    def declare_scorer(
        cls, type_id: str, label: str, params: type[ScorerParams], options: Mapping[str, Any]
    ) -> DeclaredScorer:
        """``options``: the optional metadata the decorator was given explicitly."""
        ...


D = TypeVar("D", bound=ScorerDeclaration)


class ScorerDecorator(Protocol[P]):
    """What ``register_scorer(...)`` returns: it takes a factory or a declaration class and
    returns it unchanged, registered."""

    @overload
    def __call__(self, target: type[D]) -> type[D]: ...

    @overload
    def __call__(self, target: Callable[[P], Scorer]) -> Callable[[P], Scorer]: ...


def register_scorer(
    type_id: str,
    *,
    label: str,
    description: str | None = None,
    params: type[P] = NoParams,  # type: ignore[assignment]
    higher_is_better: bool | None = None,
    score_range: tuple[float, float] | None = None,
    kind: ScorerKind | None = None,
    preview_notes: str | None = None,
    reference: str | None = None,
    aliases: Iterable[str] = (),
    aggregations: Iterable[str] = ("mean",),
    prompts: Mapping[str, str] | None = None,
    extra: str | None = None,
) -> ScorerDecorator[P]:
    """The one way to declare a scorer type, code or judge.

    On a factory ``build(params) -> Scorer`` (a code scorer): registers it as is; ``kind``
    defaults to ``"code"`` and ``description`` to the factory's docstring. On a declaration
    class (a ``JudgeScorer`` subclass): the class derives its factory, kind, description
    (its docstring) and prompts; the optional metadata given here (direction, range,
    reference, preview notes) is set on the class as if declared in its body. Unset
    optional metadata keeps its default (higher is better, range 0..1).
    """

    def metadata(target: object) -> DeclaredScorer:
        if isinstance(target, type):
            declare = getattr(target, "declare_scorer", None)
            if declare is None:
                raise TypeError(
                    f"register_scorer({type_id!r}) decorates a factory function or a "
                    f"declaration class (a JudgeScorer subclass), not {target.__qualname__}"
                )
            given = {
                "higher_is_better": higher_is_better,
                "score_range": score_range,
                "reference": reference,
                "preview_notes": preview_notes,
            }
            options = {name: value for name, value in given.items() if value is not None}
            declared: DeclaredScorer = declare(type_id, label, params, options)
            if kind is not None and kind != declared.kind:
                raise TypeError(
                    f"scorer {type_id!r}: {target.__qualname__} declares a {declared.kind} "
                    f"scorer, not kind={kind!r}"
                )
            if description is not None:
                declared = dataclasses.replace(declared, description=description)
            return declared
        if not callable(target):
            raise TypeError(f"register_scorer({type_id!r}) needs a factory function or class")
        text = description if description is not None else inspect.getdoc(target)
        if not text:
            raise TypeError(f"scorer {type_id!r}: give a description (or a docstring)")
        return DeclaredScorer(
            build=target,
            kind=kind or "code",
            description=text,
            prompts=dict(prompts or {}),
            higher_is_better=True if higher_is_better is None else higher_is_better,
            score_range=(0.0, 1.0) if score_range is None else score_range,
            reference=reference,
            preview_notes=preview_notes or "",
        )

    def decorate(target: Any) -> Any:
        declared = metadata(target)
        register(
            ScorerType(
                type_id=type_id,
                label=label,
                description=declared.description,
                params_model=params,
                build=declared.build,
                higher_is_better=declared.higher_is_better,
                score_range=declared.score_range,
                kind=declared.kind,
                preview_notes=declared.preview_notes,
                reference=declared.reference,
                aliases=tuple(aliases),
                aggregations=tuple(aggregations),
                prompts=dict(declared.prompts),
                extra=extra,
            )
        )
        return target

    return cast("ScorerDecorator[P]", decorate)


def reload_plugins() -> None:
    """Re-scan entry points (for tests and long-lived processes that install plugins)."""
    SCORER_TYPES.reload_plugins()


def get_scorer_type(type_id: str) -> ScorerType[Any]:
    """Look a type up by id or alias; unknown ids get a "did you mean"."""
    return SCORER_TYPES.get(type_id)


def list_scorers() -> list[ScorerTypeInfo]:
    """Every registered scorer type, with its params as JSON Schema, sorted by id."""
    return [scorer_type.info() for _, scorer_type in SCORER_TYPES.items()]


def validate_params(scorer_type: ScorerType[P], params: Mapping[str, Any]) -> P:
    """Validate params against the type's model; errors name the param and the options."""
    model = scorer_type.params_model
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        allowed = sorted(model.model_fields)
        accepted = {*allowed, *(f.alias for f in model.model_fields.values() if f.alias)}
        by_alias = {f.alias: name for name, f in model.model_fields.items() if f.alias}
        messages = []
        for err in exc.errors():
            loc = [by_alias.get(str(part), str(part)) for part in err["loc"][:1]]
            loc += [str(part) for part in err["loc"][1:]]
            name = ".".join(loc) or "<params>"
            if err["type"] == "extra_forbidden":
                close = difflib.get_close_matches(str(err["loc"][0]), sorted(accepted), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                messages.append(f"param {name!r} is not allowed{hint}")
            else:
                messages.append(f"param {name!r}: {err['msg']}")
        listing = ", ".join(allowed) if allowed else "none"
        raise ScorerParamsError(
            f"scorer {scorer_type.type_id!r}: {'; '.join(messages)} (allowed params: {listing})"
        ) from exc


def scorer_config_problem(spec: Mapping[str, Any], exc: ValidationError) -> str:
    """The first problem of a scorer config in the user's words: a misspelt key names the
    key and the closest allowed one; a missing or bad field names the field."""
    keys = sorted(ScorerConfig.model_fields)
    label = (
        f"scorer config {spec.get('type')!r}"
        if isinstance(spec.get("type"), str)
        else ("scorer config")
    )
    problems = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "<config>"
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(field, keys, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"unknown key {field!r}{hint} (allowed keys: {', '.join(keys)})")
        elif err["type"] == "missing":
            problems.append(f"missing key {field!r}")
        else:
            problems.append(f"key {field!r}: {err['msg']}")
    return f"{label}: " + "; ".join(problems)


def create_scorer(spec: str | ScorerConfig | Mapping[str, Any], /, **params: Any) -> Scorer:
    """Build a scorer from a type id plus params, a ``ScorerConfig``, or a config dict.

    Examples: ``create_scorer("content-similarity", ignore_case=False)``,
    ``create_scorer(ScorerConfig(type="tone", params={"reference_tone": "Great!"}))``.
    """
    if isinstance(spec, str):
        config = ScorerConfig(type=spec, params=params)
    elif isinstance(spec, ScorerConfig):
        config = spec.model_copy(update={"params": {**spec.params, **params}})
    else:
        try:
            config = ScorerConfig.model_validate({**spec})
        except ValidationError as exc:
            raise ScorerParamsError(scorer_config_problem(spec, exc)) from exc
        if params:
            config = config.model_copy(update={"params": {**config.params, **params}})
    scorer_type = get_scorer_type(config.type)
    validated = validate_params(scorer_type, config.params)
    if scorer_type.extra is not None:  # before any item is scored: one line, not N errors
        require_extra(scorer_type.extra, f"the {scorer_type.type_id!r} scorer")
    scorer = scorer_type.build(validated)
    return dataclasses.replace(
        scorer,
        id=config.id or scorer_type.type_id,
        label=config.label
        or (scorer.label if scorer.label != scorer.id else None)
        or scorer_type.label,
        type_id=scorer_type.type_id,
        params=validated.model_dump(mode="json"),
        higher_is_better=scorer_type.higher_is_better,
        score_range=scorer_type.range_for(validated),
        weight=config.weight,
        threshold=config.threshold,
        aggregations=scorer_type.aggregations,
    )
