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

import math
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.config_file import (
    ConfigError,
    anchor_paths,
    merge_overrides,
    read_config_file,
    validate_config,
)

CalibrationKind = Literal["binary", "ordinal", "numeric", "pairwise"]
GateOn = Literal["ci", "point"]


class CalibrationConfigError(ConfigError):
    """The calibration config is invalid; the message names the file and the key."""


class SplitConfig(BaseModel):
    """A held-out split: ``test`` is the fraction of items kept out of prompt iteration."""

    model_config = ConfigDict(extra="forbid")

    test: float = Field(gt=0.0, lt=1.0, description="Held-out fraction of the items (0..1).")
    seed: int = Field(default=0, description="Seed of the random assignment to dev/test.")


class LabelledDataKeys(BaseModel):
    """Where the human labels are and how to read them: the keys a calibration config and an
    ``optimize-judge`` config share (a calibration config becomes a judge-optimization
    config by adding the search settings), defined and checked once here."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

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

    @model_validator(mode="after")
    def _one_labelled_source(self) -> Self:
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

    def labelled_data_keys(self) -> dict[str, Any]:
        """These keys as given (``None`` left out): what a ``CalibrationConfig`` needs
        besides its scorer to read the same labels."""
        keys = self.model_dump(include=set(LabelledDataKeys.model_fields), exclude_none=True)
        keys.pop("label_map", None)
        if self.label_map is not None:
            keys["label_map"] = dict(self.label_map)
        return keys


class GateKeys(BaseModel):
    """The gates a judge must clear (``min``, on the CI or the estimate) and the bootstrap
    that gives the CIs: shared by calibrations and judge optimizations."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    gates: dict[str, float] = Field(default_factory=dict, alias="min")
    gate_on: GateOn = "ci"
    resamples: int = Field(default=1000, ge=100, description="Bootstrap resamples per CI.")
    concurrency: int = Field(default=8, ge=1)

    @field_validator("gates")
    @classmethod
    def _finite_gates(cls, value: dict[str, float]) -> dict[str, float]:
        for metric, bound in value.items():
            if not math.isfinite(bound):
                raise ValueError(f"gate {metric!r}: {bound} is not a finite number")
        return value


class CalibrationConfig(LabelledDataKeys, GateKeys):
    """A calibration: scorer(s), labelled data, how to read the label, and the gates."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
    scorer: str | dict[str, Any] | list[str | dict[str, Any]] = Field(
        description="A scorer type or {type, params}; a list compares configurations."
    )
    repeats: int = Field(default=1, ge=1)
    split: SplitConfig | None = None
    require: list[str] = Field(
        default_factory=list,
        description="Statistics that must be defined with a CI; each is a gate of its own.",
    )
    timeout: float | None = Field(default=None, gt=0)
    seed: int = Field(default=0, description="Seed of the bootstrap.")
    disagreements: int = Field(default=20, ge=0, description="How many to list and export.")

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
    """Read a YAML calibration config; ``overrides`` (CLI flags that were given) win
    (``min`` gates merge with the file's, ``require`` extends it).

    A relative ``data`` path is relative to the config file's folder.
    """
    path = Path(path)
    raw = read_config_file(path, error=CalibrationConfigError)
    anchor_paths(raw, ("data",), path.parent)
    return make_calibration_config(
        merge_overrides(raw, overrides, merged=("min", "require")), source=str(path)
    )


def make_calibration_config(
    raw: dict[str, Any], *, source: str = "calibration config"
) -> CalibrationConfig:
    """Validate a calibration config; the error names the key in the user's words."""
    return validate_config(
        CalibrationConfig,
        raw,
        source=source,
        error=CalibrationConfigError,
        nested={"split": SplitConfig},
    )
