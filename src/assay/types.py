"""Core value types shared by every layer: score results, judge-call records, usage.

These are plain pydantic models with no I/O so that the store, the runner, the API and the
CLI all speak the same shapes. Results are immutable (``frozen``): a scorer never mutates a
result after returning it, which is what lets one scorer instance serve many items at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
    model_validator,
)

ScoreStatus = Literal["ready", "not_scorable", "error"]
"""``ready``: a numeric score; ``not_scorable``: a step declined to score; ``error``: it failed."""

StepName = Literal["preprocess", "analyze", "score", "reason"]
STEP_ORDER: tuple[StepName, ...] = ("preprocess", "analyze", "score", "reason")


def _range_as_json(value: tuple[float, float]) -> list[float | str]:
    """An unbounded end as ``"inf"``/``"-inf"``: JSON has no infinity (pydantic would write
    null, which reads back as an error), and pydantic reads these strings back as floats."""
    return [v if math.isfinite(v) else ("inf" if v > 0 else "-inf") for v in value]


ScoreRange = Annotated[tuple[float, float], PlainSerializer(_range_as_json, when_used="json")]
"""A scorer's (low, high) range; either end may be infinite (an unbounded scale)."""


class Usage(BaseModel):
    """Token usage of one model call (OpenAI naming normalised to input/output)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None

    @model_validator(mode="after")
    def _fill_total(self) -> Usage:
        if self.total_tokens == 0 and (self.input_tokens or self.output_tokens):
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
        return self

    def __add__(self, other: Usage) -> Usage:
        def _opt(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            reasoning_tokens=_opt(self.reasoning_tokens, other.reasoning_tokens),
            cached_input_tokens=_opt(self.cached_input_tokens, other.cached_input_tokens),
        )


class JudgeCall(BaseModel):
    """The record of one judge step: what was asked, how often, what came back, what it cost.

    ``attempts`` counts model invocations including the repair retry; ``output`` is the
    validated answer (a number for a score step, text for a reason step, an object
    otherwise); ``raw_output`` keeps the model's last raw text so a failed parse can be
    inspected instead of silently becoming a score.
    """

    model_config = ConfigDict(frozen=True)

    step: StepName
    status: Literal["success", "failed"]
    prompt: str
    model_id: str
    provider: str | None = None
    attempts: int = 1
    duration_ms: float = 0.0
    output: Any = None
    raw_output: str | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    cached: bool = False
    cost_usd: float | None = None
    """Summed over attempts when the model reports a price (see ``assay.models.prices``)."""


class ScoreError(BaseModel):
    """Why a scorer run failed: the message, the step that failed, the steps that completed."""

    model_config = ConfigDict(frozen=True)

    message: str
    failed_step: StepName | None = None
    completed_steps: list[StepName] = Field(default_factory=list)
    kind: str = "ScorerRunError"


class ScoreResult(BaseModel):
    """The outcome of one ``scorer.run``.

    Invariant (enforced): ``score`` is a finite number exactly when ``status == "ready"``;
    an error or a not-scorable result never carries a number, so nothing downstream can
    average a failure in by accident.
    """

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    scorer_label: str = Field(validation_alias=AliasChoices("scorer_label", "scorer_name"))
    """The scorer's display name (``scorer_name`` in records written before it was renamed)."""
    call_id: str
    """Identifies this one scorer call (a run is an evaluation; see ``RunInfo.id``)."""
    status: ScoreStatus
    score: float | None = None
    """The headline number (what means, pass rates and comparisons use)."""
    values: dict[str, float] = Field(default_factory=dict)
    """Named extra numbers of this one result (``rouge1``/``rouge2``/``rougeL``, ``precision``
    /``recall``/``f1``, per-dimension scores); finite, and only on a ready result."""
    corpus: Any = None
    """Per-item data (JSON-shaped) for a corpus-level aggregation of the scorer, e.g. a
    (prediction, references) pair or sufficient statistics: BLEU or a corpus F1 is computed
    over all items' payloads, not averaged per item. Only on a ready result."""
    reason: str | None = None
    steps: dict[str, Any] = Field(default_factory=dict)
    """Results of the completed steps keyed by step name (``preprocess``, ``analyze`` ...)."""
    prompts: dict[str, str] = Field(default_factory=dict)
    """Prompts sent by judge steps, keyed by step name."""
    judge_calls: list[JudgeCall] = Field(default_factory=list)
    error: ScoreError | None = None
    not_scorable_step: StepName | None = None
    duration_ms: float = 0.0

    @model_validator(mode="after")
    def _score_matches_status(self) -> ScoreResult:
        if self.status == "ready":
            if self.score is None or not math.isfinite(self.score):
                raise ValueError("a ready ScoreResult needs a finite score")
        elif self.score is not None:
            raise ValueError(f"a ScoreResult with status {self.status!r} cannot carry a score")
        elif self.values or self.corpus is not None:
            raise ValueError(
                f"a ScoreResult with status {self.status!r} cannot carry values or a corpus payload"
            )
        for key, value in self.values.items():
            if not key or not math.isfinite(value):
                raise ValueError(f"ScoreResult value {key!r} must be a finite number under a name")
        if self.status == "error" and self.error is None:
            raise ValueError("an error ScoreResult needs an error")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ready"

    @property
    def usage(self) -> Usage:
        """Total token usage of every judge call of this run."""
        total = Usage()
        for call in self.judge_calls:
            total = total + call.usage
        return total


# ---------------------------------------------------------------------------------- runs


class Item(BaseModel):
    """One dataset row. ``expected_output`` is what scorers receive as ``ground_truth``.

    ``output`` is optional: an item that carries one can be scored without a target (the
    run judges the stored output). An item needs ``input`` or ``output``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    input: Any = None
    output: Any = None
    expected_output: Any = None
    context: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _needs_input_or_output(self) -> Item:
        if self.input is None and self.output is None:
            raise ValueError("an item needs 'input' or 'output'")
        return self


ITEM_FIELDS: tuple[str, ...] = ("id", "input", "output", "expected_output", "context", "metadata")

UNADDRESSABLE_IDS = frozenset({".", ".."})
"""Item ids no link can reach: browsers drop ``.`` and ``..`` path segments from every URL,
escaped or not, so such an item's page could never be opened, reviewed or annotated.
Refused where items enter (file and upload rows, ``Item`` objects handed to a run or
written to the store) with one line naming the item; ``Item`` itself accepts them, so
rows stored before the rule still read back."""

UNADDRESSABLE_ID_PROBLEM = "cannot be addressed in a URL: choose another id"


class TargetError(BaseModel):
    """Why the target failed on an item: stored on the item result instead of a output."""

    model_config = ConfigDict(frozen=True)

    message: str
    kind: str = "Exception"
    traceback: str | None = None


class ItemResult(BaseModel):
    """The outcome of one item (one repeat): the output, its latency, its scores.

    ``error`` is set when the target failed; scores are then absent. A scorer failing on
    this item is an ``error`` ``ScoreResult`` under its id, not an item error.
    """

    model_config = ConfigDict(frozen=True)

    item_id: str
    repeat: int = 0
    position: int = 0
    """Position of the item in the run's data (stable order for reports)."""
    input: Any = None
    output: Any = None
    expected_output: Any = None
    error: TargetError | None = None
    latency_ms: float | None = None
    """Time the target took; ``None`` when the run scored a stored output."""
    scores: dict[str, ScoreResult] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    started_at: float = 0.0
    """Unix time (seconds) the item started."""
    completed_at: float = 0.0
    usage: Usage | None = None
    """Tokens the target spent on this item (a model prompt target, or a target that
    reports them); ``None`` when it reported none. Judge tokens are on the scores."""
    cost_usd: float | None = None
    """What the target's calls cost, when known."""
    samples: list[Any] | None = None
    """Every sample the target drew (``n`` > 1); ``output`` is the one scored."""
    meta: dict[str, Any] | None = None
    """How the row came to be stored, for rows that are not one item of a planned run: a
    live monitor's sampling decision, rate and the observation's fate (``decision``,
    ``rate``, ``deterministic``, ``fate``, ``reason``), or ``ingest``'s. ``None`` for the
    runner's results."""

    @property
    def ok(self) -> bool:
        return self.error is None


class ValueSummary(BaseModel):
    """Statistics of one named value (``ScoreResult.values[key]``) of a scorer over a run,
    computed like the headline score's: over per-item means, errors never averaged in."""

    model_config = ConfigDict(frozen=True)

    count: int = 0
    mean: float | None = None
    stderr: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    min: float | None = None
    max: float | None = None


class ScorerSummary(BaseModel):
    """Aggregate of one scorer over a run: means ignore errors and not-scorable results.

    ``pass_rate`` is the share of numeric scores on the good side of ``threshold``
    (``>=`` when higher is better, ``<=`` otherwise); ``None`` without a threshold.
    ``threshold`` is on the scorer's own scale: the scorer's own threshold, else the run's
    threshold level mapped onto its range (see ``threshold_on_scale``).
    With repeats, statistics are over per-item means, so an item counts once.
    """

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    scorer_label: str = Field(validation_alias=AliasChoices("scorer_label", "scorer_name"))
    """The scorer's display name (``scorer_name`` in records written before it was renamed)."""
    higher_is_better: bool = True
    score_range: ScoreRange = (0.0, 1.0)
    count: int = 0
    mean: float | None = None
    stderr: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    min: float | None = None
    max: float | None = None
    errors: int = 0
    not_scorable: int = 0
    threshold: float | None = None
    pass_rate: float | None = None
    flipped_items: list[str] = Field(default_factory=list)
    """Items whose pass/fail verdict differs between repeats (needs a threshold)."""
    mean_spread: float | None = None
    """Mean over items of (max - min) across repeats; ``None`` without repeats."""
    values: dict[str, ValueSummary] = Field(default_factory=dict)
    """One summary per named value the scorer reported (``rouge2``, ``recall`` ...)."""
    aggregates: dict[str, float | None] = Field(default_factory=dict)
    """The scorer's declared aggregations (``mean``, ``median``, ``pass@k``, corpus
    functions) by name; ``None`` where there was nothing to aggregate."""
    weight: float = 1.0
    normalized_mean: float | None = None
    """``mean`` mapped onto 0..1 (1 = best end of the range, see ``normalize_score``);
    ``None`` without a mean or when the range is unbounded."""


class RunSummary(BaseModel):
    """Aggregates of a run: item counts, per-scorer summaries, latency, judge usage."""

    model_config = ConfigDict(frozen=True)

    items: int = 0
    """Distinct items."""
    results: int = 0
    """Item results (items x repeats) completed."""
    item_errors: int = 0
    repeats: int = 1
    scorers: dict[str, ScorerSummary] = Field(default_factory=dict)
    weighted_score: float | None = None
    """Σ wᵢ·normalized_meanᵢ / Σ wᵢ over the scorers in ``weighted_scorers``: the weighted
    mean of per-scorer normalized means (0..1, 1 = best). A scorer's errors and not-scorable
    results are left out of its own mean (never counted as 0 or 1); a scorer with weight 0
    or an unbounded range is left out; a weighted scorer without any number makes it
    ``None`` (see ``unscored_scorers``)."""
    weighted_scorers: list[str] = Field(default_factory=list)
    """The scorers that went into ``weighted_score``."""
    unscored_scorers: list[str] = Field(default_factory=list)
    """Scorers with a positive weight that produced no score (every result an error or not
    scorable); while any is listed, ``weighted_score`` is ``None`` (undefined)."""
    latency_ms_mean: float | None = None
    latency_ms_p50: float | None = None
    latency_ms_p95: float | None = None
    duration_s: float | None = None
    judge_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    """Judge tokens (every judge call of every score)."""
    cost_usd: float | None = None
    """Judge cost, when the judge models are priced."""
    target_usage: Usage = Field(default_factory=Usage)
    """Tokens the target spent (summed over item results that reported usage)."""
    target_cost_usd: float | None = None
    """What the target cost, when it reported a cost."""


RunStatus = Literal["pending", "running", "completed", "failed", "interrupted"]
"""``interrupted``: stopped (Ctrl-C, kill) with results kept; ``assay runs resume`` finishes it."""


class ScorerSpec(BaseModel):
    """How a run describes one of its scorers, enough to show it and, when ``type`` is a
    registered scorer type, to re-create it on resume (``create_scorer``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str = Field(validation_alias=AliasChoices("label", "name"))
    """Display name (``name`` in runs recorded before it was renamed)."""
    type: str | None = None
    """Registered type id; ``None`` for a custom ``Scorer`` built in Python."""
    params: dict[str, Any] = Field(default_factory=dict)
    weight: float = 1.0
    fingerprint: str = ""
    fingerprint_parts: dict[str, str] = Field(default_factory=dict)
    """The named parts the fingerprint hashes (steps, params, judge), to say what changed."""
    higher_is_better: bool = True
    score_range: ScoreRange = (0.0, 1.0)
    threshold: float | None = None
    """The scorer's own pass threshold on its own scale (overrides the run's)."""
    aggregations: tuple[str, ...] = ("mean",)
    """Names in the aggregation registry (``assay.summary.aggregations``)."""

    def normalize(self, score: float) -> float:
        """``score`` on 0..1, 1 being the best end of the range (see ``normalize_score``)."""
        return normalize_score(score, self.score_range, higher_is_better=self.higher_is_better)


TargetKind = Literal["callable", "model", "agent", "workflow", "scorer", "stored-output", "task"]


class TargetSpec(BaseModel):
    """How a run describes its target: ``ref`` is an import path ``pkg.module:attr`` when the
    target came from one; ``config`` holds a model prompt target's or a scorer target's
    settings. A target given as a bare Python object has ``ref=None`` and cannot be
    re-created by ``assay runs resume`` without passing it again."""

    model_config = ConfigDict(frozen=True)

    kind: TargetKind
    label: str
    ref: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    fingerprint: str = ""
    """Hash of the target's code or config when the run started (``runs resume`` checks it)."""
    fingerprint_parts: dict[str, str] = Field(default_factory=dict)


class RunInfo(BaseModel):
    """What a run is: its data, target, scorers and settings. Written once when it starts."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str | None = None
    dataset_id: str | None = None
    dataset_name: str | None = None
    dataset_version: int | None = None
    data_source: str | None = None
    """Where inline data came from (a file path), for display; ``None`` for Python lists."""
    target: TargetSpec
    scorers: list[ScorerSpec] = Field(default_factory=list)
    concurrency: int = 8
    repeats: int = 1
    threshold: float | None = None
    total_items: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: float = 0.0
    timeout_s: float | None = Field(default=None, gt=0)
    """Per-item limit, in seconds, for the target call and for each scorer call; ``None``:
    none. A target past it fails its item (``TargetError`` kind ``TimeoutError``), a scorer
    past it gets an error result; the run goes on."""
    tags: list[str] = Field(default_factory=list)
    """Labels to find the run by (``git.commit=abc123``, ``baseline=main``): each 1..255
    characters without control characters, duplicates dropped (see ``check_tags``)."""
    backend: Literal["local", "ray"] = "local"
    """What executed the run: this process (``local``) or Ray workers over the store."""
    workers: int | None = Field(default=None, ge=1)
    """How many Ray workers scored the run (``None`` for a local run)."""

    @field_validator("tags")
    @classmethod
    def _valid_tags(cls, tags: list[str]) -> list[str]:
        return check_tags(tags)


class RunRecord(BaseModel):
    """A stored run: its description, where it is, and (once finished) its summary."""

    model_config = ConfigDict(frozen=True)

    info: RunInfo
    status: RunStatus
    completed_results: int = 0
    failed_results: int = 0
    started_at: float | None = None
    completed_at: float | None = None
    summary: RunSummary | None = None

    @property
    def id(self) -> str:
        return self.info.id


class ScoreRow(NamedTuple):
    """One stored score in its flattest form, for statistics and comparisons."""

    item_id: str
    position: int
    repeat: int
    scorer_id: str
    status: ScoreStatus
    score: float | None
    values: dict[str, float] | None = None
    """The result's named values (``None`` when it had none)."""


# ------------------------------------------------------------------ direction and range


def range_is_bounded(score_range: tuple[float, float]) -> bool:
    """Whether ``score_range`` can be mapped onto 0..1: finite ends, low < high."""
    low, high = score_range
    return math.isfinite(low) and math.isfinite(high) and low < high


def normalize_score(
    score: float, score_range: tuple[float, float], *, higher_is_better: bool = True
) -> float:
    """``score`` mapped onto 0..1 with 1 at the best end of ``score_range``.

    ``(score - low) / (high - low)``, flipped (``1 - x``) when lower is better, clipped to
    0..1 so one out-of-range number cannot outweigh the others. An unbounded or empty range
    raises ``ValueError`` (there is no best end to measure from).
    """
    if not range_is_bounded(score_range):
        raise ValueError(f"cannot normalize on the score range {score_range}: it is not bounded")
    low, high = score_range
    x = min(1.0, max(0.0, (score - low) / (high - low)))
    return x if higher_is_better else 1.0 - x


def threshold_on_scale(
    level: float, score_range: tuple[float, float], *, higher_is_better: bool = True
) -> float:
    """The inverse of ``normalize_score``: the score on the scorer's own scale whose
    normalized value is ``level`` (a run-wide threshold is such a level, 0..1). With
    ``passing`` (``>=`` when higher is better, ``<=`` otherwise) a score passes exactly when
    its normalized value is at least ``level``."""
    if not range_is_bounded(score_range):
        raise ValueError(f"cannot place a level on the score range {score_range}: not bounded")
    low, high = score_range
    x = level if higher_is_better else 1.0 - level
    return low + x * (high - low)


def check_run_threshold(threshold: float | None) -> None:
    """A run-wide threshold is a level on the normalized 0..1 scale; say so when not."""
    if threshold is not None and not (0.0 <= threshold <= 1.0):
        raise ValueError(
            f"threshold {threshold:g} is outside 0..1: the run-wide threshold is a level on "
            "each scorer's normalized scale (0 = worst, 1 = best end of its range); give a "
            "scorer its own threshold on its own scale with the scorer config's 'threshold'"
        )


MAX_TAG_LENGTH = 255


def check_tags(tags: Iterable[str]) -> list[str]:
    """``tags`` without duplicates (first kept), or a ``ValueError`` naming the bad tag:
    empty, longer than 255 characters, or holding a control character."""
    if isinstance(tags, str):
        raise ValueError(f"tags {tags!r}: a list of tags, not one string")
    seen: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            raise ValueError(f"tag {tag!r}: a tag is a non-empty string")
        if len(tag) > MAX_TAG_LENGTH:
            raise ValueError(f"tag {tag[:40]!r}...: longer than {MAX_TAG_LENGTH} characters")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in tag):
            raise ValueError(f"tag {tag!r}: control characters are not allowed")
        seen.setdefault(tag, None)
    return list(seen)
