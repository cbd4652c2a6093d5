"""A calibration described as data (``assay calibrate CONFIG.yaml``), validated up front.

The keys are a contract (issue 11): ``scorer`` (one scorer config, or a list of them to
compare), ``data`` (a file), ``dataset`` (+ ``version``) or ``annotations`` (a stored run
whose annotated items are the labelled data), ``label`` (the item field with the
human label, default ``expected_output``, or ``metadata.human_label`` with
``annotations``; ``metadata.x.y`` reaches into metadata, and a bare name that is not an
item field is looked up in metadata, where a data file's extra columns land),
``label_map`` (label text to a number), ``kind`` (``binary``, ``ordinal``, ``numeric``,
``pairwise``), ``label_range`` (``[low, high]`` of a numeric human scale, mapped onto the
scorer's score range), ``threshold`` (score at or above it is a positive verdict), ``repeats``,
``split`` (held-out ``test`` fraction and ``seed``), ``min`` (gates). A typo is an error naming
the key, never a silently ignored setting: a calibration that quietly ignored ``min:`` would
certify a judge nobody gated.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.config_file import MissingVariableError, substitute_env

CalibrationKind = Literal["binary", "ordinal", "numeric", "pairwise"]
GateOn = Literal["ci", "point"]


class CalibrationConfigError(ValueError):
    """The calibration config is invalid; the message names the file and the key."""


class SplitConfig(BaseModel):
    """A held-out split: ``test`` is the fraction of items kept out of prompt iteration."""

    model_config = ConfigDict(extra="forbid")

    test: float = Field(gt=0.0, lt=1.0, description="Held-out fraction of the items (0..1).")
    seed: int = Field(default=0, description="Seed of the random assignment to dev/test.")


class CalibrationConfig(BaseModel):
    """A calibration: scorer(s), labelled data, how to read the label, and the gates."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
    scorer: str | dict[str, Any] | list[str | dict[str, Any]] = Field(
        description="A scorer type or {type, params}; a list compares configurations."
    )
    data: str | None = Field(default=None, description="A labelled data file.")
    dataset: str | None = Field(default=None, description="A stored labelled dataset.")
    version: int | None = Field(default=None, ge=0, description="Dataset version to pin.")
    annotations: str | None = Field(
        default=None,
        min_length=1,
        description="A stored run id: its annotated items (``operations.annotations."
        "human_labels``) are the labelled data, the label ``metadata.human_label``.",
    )
    label: str = Field(default="expected_output", min_length=1)
    label_map: dict[str, float] | None = None
    label_range: tuple[float, float] | None = Field(
        default=None,
        description="[low, high] of the human scale (e.g. [0, 5]); labels are mapped "
        "linearly onto the scorer's score range so errors (MAE, RMSE, α) compare like "
        "with like.",
    )
    kind: CalibrationKind
    threshold: float | None = Field(
        default=None, description="Scores at or above it are positive verdicts (binary)."
    )
    repeats: int = Field(default=1, ge=1)
    split: SplitConfig | None = None
    gates: dict[str, float] = Field(default_factory=dict, alias="min")
    gate_on: GateOn = "ci"
    require: list[str] = Field(
        default_factory=list,
        description="Statistics that must be defined with a CI; each is a gate of its own.",
    )
    concurrency: int = Field(default=8, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    resamples: int = Field(default=1000, ge=100, description="Bootstrap resamples per CI.")
    seed: int = Field(default=0, description="Seed of the bootstrap.")
    disagreements: int = Field(default=20, ge=0, description="How many to list and export.")

    @model_validator(mode="before")
    @classmethod
    def _annotation_label(cls, value: Any) -> Any:
        # annotations carry their label in metadata.human_label; an explicit label still wins
        wanted = isinstance(value, dict) and value.get("annotations") is not None
        if wanted and value.get("label") is None:
            return {**value, "label": "metadata.human_label"}
        return value

    @field_validator("label_map", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        # YAML reads `yes: 1` as {True: 1} and `1: 1.0` as {1: 1.0}: labels are matched as text
        if isinstance(value, dict):
            return {_label_text(k): v for k, v in value.items()}
        return value

    @field_validator("gates")
    @classmethod
    def _finite_gates(cls, value: dict[str, float]) -> dict[str, float]:
        for metric, bound in value.items():
            if not math.isfinite(bound):
                raise ValueError(f"gate {metric!r}: {bound} is not a finite number")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CalibrationConfig:
        sources = [self.data, self.dataset, self.annotations]
        if sum(source is not None for source in sources) != 1:
            raise ValueError(
                "give exactly one of 'data' (a file), 'dataset' (a stored dataset) and "
                "'annotations' (a stored run whose annotations are the labels)"
            )
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        if self.label_range is not None:
            low, high = self.label_range
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError("'label_range' must be [low, high] with finite low < high")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ValueError("'threshold' must be a finite number")
        if self.kind == "pairwise" and self.threshold is not None:
            raise ValueError(
                "'threshold' does not apply to kind 'pairwise' (a score above 0.5 prefers the "
                "first output, below 0.5 the second, 0.5 is a tie)"
            )
        return self

    @property
    def scorer_configs(self) -> list[str | dict[str, Any]]:
        """The scorer(s) as a list (one entry unless configurations are compared)."""
        return list(self.scorer) if isinstance(self.scorer, list) else [self.scorer]


def _label_text(key: Any) -> str:
    if isinstance(key, bool):
        return "yes" if key else "no"
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    text = str(key).strip()
    return {"true": "yes", "false": "no"}.get(text.lower(), text)


def label_text(value: Any) -> str:
    """A label value as the text ``label_map`` keys are matched against: YAML reads ``yes``
    as ``True`` (both are ``"yes"``), and ``1.0`` matches ``1``."""
    return _label_text(value)


def load_calibration_config(path: str | Path, **overrides: Any) -> CalibrationConfig:
    """Read a YAML calibration config; ``overrides`` (CLI flags that were given) win.

    A relative ``data`` path is relative to the config file's folder.
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise CalibrationConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise CalibrationConfigError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise CalibrationConfigError(f"{path}: expected a mapping at the top level")
    try:
        raw = substitute_env(raw)
    except MissingVariableError as exc:
        raise CalibrationConfigError(f"{path}: {exc}") from None
    value = raw.get("data")
    if isinstance(value, str) and not Path(value).is_absolute():
        raw["data"] = str(path.parent / value)
    given = {key: value for key, value in overrides.items() if value is not None}
    if "min" in given and isinstance(raw.get("min"), dict):
        given["min"] = {**raw["min"], **given["min"]}
    if "require" in given and isinstance(raw.get("require"), list):
        given["require"] = [*raw["require"], *given["require"]]
    return make_calibration_config({**raw, **given}, source=str(path))


def make_calibration_config(
    raw: dict[str, Any], *, source: str = "calibration config"
) -> CalibrationConfig:
    """Validate a calibration config; the error names the key in the user's words."""
    if isinstance(raw.get("label_map"), dict):
        raw = {**raw, "label_map": {_label_text(k): v for k, v in raw["label_map"].items()}}
    try:
        return CalibrationConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        top = loc[0] if loc else ""
        where = ".".join(loc) or "config"
        if first["type"] == "extra_forbidden" and len(loc) == 1:
            keys = sorted({f.alias or name for name, f in CalibrationConfig.model_fields.items()})
            close = difflib.get_close_matches(top, keys, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"unknown key {top!r}{hint} (allowed keys: {', '.join(keys)})"
        elif first["type"] == "missing":
            message = f"missing key {where!r}"
        elif top == "kind":
            message = (
                f"key 'kind': {raw.get('kind')!r} is not one of binary, ordinal, numeric, pairwise"
            )
        else:
            message = f"key {where!r}: {first['msg']}"
        raise CalibrationConfigError(f"{source}: {message}") from exc
