"""Try scorer configs on a few rows without storing anything: the scorer catalogue and the
preview behind the run launcher (``GET /api/scorers``, ``POST /api/scorers/test``).

Validation errors carry the *path* of the bad field (``scorers[0].params.threshold``) so
a form can put the message next to the input that caused it; the registry's own
``validate_params`` only names the param, which is enough for the CLI but not for a form
with several scorers.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticUndefined, to_jsonable_python

from assay.scoring.registry import ScorerKind, ScorerType, get_scorer_type, list_scorers
from assay.scoring.scorer import Scorer
from assay.types import ScoreResult

MAX_PREVIEW_ROWS = 20
MAX_PREVIEW_SCORERS = 10

Loc = list[str | int]


class FieldProblem(BaseModel):
    """One invalid field: where it is (``loc``), what is wrong (``msg``), pydantic's type."""

    loc: Loc
    msg: str
    type: str = "value_error"

    @property
    def path(self) -> str:
        """``scorers[0].params.threshold``: the ``loc`` as a reader writes it."""
        return loc_path(self.loc)


def loc_path(loc: Sequence[str | int]) -> str:
    """``["scorers", 0, "params", "x"]`` → ``scorers[0].params.x``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class FieldErrors(ValueError):
    """Input failed validation; ``problems`` name each bad field by its path."""

    def __init__(self, problems: Sequence[FieldProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{p.path}: {p.msg}" for p in self.problems))


class ScorerCatalogueEntry(BaseModel):
    """What a scorer picker needs to know about one scorer type."""

    type: str
    label: str
    description: str
    kind: ScorerKind
    params_schema: dict[str, Any]
    defaults: dict[str, Any]
    """Every param that has a default, with it (JSON values): the form's initial values."""
    higher_is_better: bool
    score_range: tuple[float, float]
    preview_notes: str = ""
    aliases: list[str] = Field(default_factory=list)


def _defaults(scorer_type: ScorerType[Any]) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    for name, info in scorer_type.params_model.model_fields.items():
        if info.default is PydanticUndefined and info.default_factory is None:
            continue
        value = info.get_default(call_default_factory=True, validated_data={})
        defaults[name] = to_jsonable_python(value, fallback=str)
    return defaults


def scorer_catalogue() -> list[ScorerCatalogueEntry]:
    """Every registered scorer type, sorted by id, with its params schema and defaults."""
    entries = []
    for info in list_scorers():
        scorer_type = get_scorer_type(info.type)
        entries.append(
            ScorerCatalogueEntry(
                type=info.type,
                label=info.label,
                description=info.description,
                kind=info.kind,
                params_schema=info.params_schema,
                defaults=_defaults(scorer_type),
                higher_is_better=info.higher_is_better,
                score_range=info.score_range,
                preview_notes=info.preview_notes,
                aliases=info.aliases,
            )
        )
    return entries


class PreviewScorer(BaseModel):
    """A scorer to try: its type id and params (``ScorerConfig``'s first two keys)."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=200)
    params: dict[str, Any] = Field(default_factory=dict)


class PreviewRow(BaseModel):
    """One row to score; the same fields as a dataset item minus id and metadata."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    output: Any = None
    expected_output: Any = None
    context: Any = None


class PreviewRequest(BaseModel):
    """Scorer configs × rows; small on purpose (a preview, not a run)."""

    model_config = ConfigDict(extra="forbid")

    scorers: list[PreviewScorer] = Field(min_length=1, max_length=MAX_PREVIEW_SCORERS)
    rows: list[PreviewRow] = Field(min_length=1, max_length=MAX_PREVIEW_ROWS)


def param_problems(
    scorer_type: ScorerType[Any], params: Mapping[str, Any], prefix: Loc
) -> list[FieldProblem]:
    model = scorer_type.params_model
    try:
        model.model_validate(dict(params))
    except ValidationError as exc:
        by_alias = {f.alias: name for name, f in model.model_fields.items() if f.alias}
        problems = []
        for err in exc.errors():
            loc: Loc = [
                by_alias.get(str(p), str(p)) if i == 0 else p for i, p in enumerate(err["loc"])
            ]
            msg = err["msg"].removeprefix("Value error, ")  # the field is in loc
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(sorted(model.model_fields)) or "none"
                msg = f"unknown param (allowed params: {allowed})"
            problems.append(FieldProblem(loc=[*prefix, *loc], msg=msg, type=err["type"]))
        return problems
    return []


def build_preview_scorers(configs: Sequence[PreviewScorer]) -> list[Scorer]:
    """Build each config's scorer. An unknown type raises ``UnknownScorerError`` (with a
    "did you mean"); bad params raise ``FieldErrors`` naming ``scorers[i].params.<name>``
    for every config at once, so a form can mark all bad fields in one round trip."""
    from assay.scoring.registry import ScorerConfig, create_scorer

    types = [get_scorer_type(config.type) for config in configs]
    problems: list[FieldProblem] = []
    for index, (config, scorer_type) in enumerate(zip(configs, types, strict=True)):
        problems += param_problems(scorer_type, config.params, ["scorers", index, "params"])
    if problems:
        raise FieldErrors(problems)
    return [
        create_scorer(ScorerConfig(type=config.type, params=config.params)) for config in configs
    ]


def is_immediate(scorer: Scorer) -> bool:
    """Whether a preview answers at once: code and check scorers do, judge scorers (which
    wait on a model) answer later."""
    return scorer.judge is None and get_scorer_type(scorer.type_id or scorer.id).kind != "judge"


async def score_row(scorer: Scorer, row: PreviewRow) -> ScoreResult:
    """Score one preview row (a ``ScoreResult``; failures are ``status="error"``)."""
    return await scorer.run(
        output=row.output,
        input=row.input,
        ground_truth=row.expected_output,
        context=row.context,
        call_id=f"preview-{uuid.uuid4().hex[:12]}",
    )


class PendingResult(BaseModel):
    """The placeholder of a judge scorer's result that follows as an event."""

    status: Literal["pending"] = "pending"
