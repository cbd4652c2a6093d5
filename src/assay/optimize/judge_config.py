"""``JudgeOptimizeConfig``: a judge-prompt optimization described as data (YAML or keywords).

The search settings (reflection model, budget, minibatches, seed) are those of
``assay optimize`` (``SearchSettings``); the labelled data is read with the keys of a
calibration config (``data``/``dataset``/``annotations``, ``label``, ``label_map``,
``label_range``, ``kind``, ``threshold``), so a calibration config becomes an optimization
config by adding the search settings. A typo is an error naming the key: an optimization
that silently ignored ``min:`` would certify a judge nobody gated.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.optimize.config import Budget, OptimizeConfigError, SearchSettings

JudgeKind = Literal["binary", "ordinal", "numeric", "pairwise"]

DEFAULT_OBJECTIVE: dict[str, str] = {
    "binary": "kappa",
    "ordinal": "quadratic_weighted_kappa",
    "numeric": "spearman",
    "pairwise": "agreement",
}

OBJECTIVES: dict[str, tuple[str, ...]] = {
    "binary": ("kappa", "mcc", "balanced_accuracy", "accuracy", "f1"),
    "ordinal": (
        "quadratic_weighted_kappa",
        "spearman",
        "kendall_tau_b",
        "pearson",
        "krippendorff_alpha_ordinal",
        "krippendorff_alpha_interval",
    ),
    "numeric": (
        "spearman",
        "pearson",
        "kendall_tau_b",
        "quadratic_weighted_kappa",
        "krippendorff_alpha_interval",
    ),
    "pairwise": ("agreement",),
}
"""The statistics a search may maximise, per kind: higher is better and bounded above by 1
(GEPA's perfect score), so a candidate that reaches 1 cannot be beaten."""


class JudgeSplit(BaseModel):
    """How the labelled items are divided, by item id: ``val`` and ``test`` fractions (the
    rest is ``train``), seeded."""

    model_config = ConfigDict(extra="forbid")

    val: float = Field(default=0.25, gt=0.0, lt=1.0)
    test: float = Field(default=0.25, gt=0.0, lt=1.0)
    seed: int = 0

    @model_validator(mode="after")
    def _room_for_train(self) -> JudgeSplit:
        if self.val + self.test >= 1.0:
            raise ValueError("'val' + 'test' must leave items for 'train' (sum below 1)")
        return self


class JudgeOptimizeConfig(SearchSettings):
    """A judge's own prompt as the GEPA candidate, its agreement with human labels as the
    objective (see ``optimize.judge``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    scorer: str | dict[str, Any] = Field(
        description="The judge scorer: a type id or {type, params}; its params may already "
        "override 'instructions' and 'templates' (the seed is then those texts)."
    )
    judge_model: str | None = Field(
        default=None,
        description="Set by the Python call when the judge is a model object (its label), so "
        "a resume without that object fails instead of judging with another model. In YAML "
        "choose the judge with the scorer's own 'model' and 'base_url' params.",
    )
    components: list[str] | None = Field(
        default=None,
        description="Which of the judge's texts to optimize ('instructions' and step names "
        "such as 'analyze'); default: every text it lets a user override.",
    )
    data: str | None = Field(default=None, description="A labelled data file.")
    dataset: str | None = Field(default=None, description="A stored labelled dataset.")
    version: int | None = Field(default=None, ge=0)
    annotations: str | None = Field(
        default=None, min_length=1, description="A stored run whose annotations are the labels."
    )
    sha256: str | None = Field(
        default=None,
        description="The data file's content hash, recorded when the optimization starts: a "
        "resume refuses a file that changed since.",
    )
    label: str = Field(default="expected_output", min_length=1)
    label_map: dict[str, float] | None = None
    label_range: tuple[float, float] | None = None
    kind: JudgeKind
    threshold: float | None = Field(
        default=None, description="Scores at or above it are positive verdicts (binary)."
    )
    objective: str | None = Field(
        default=None,
        description="The calibration statistic to maximise (default: kappa for binary, "
        "quadratic_weighted_kappa for ordinal, spearman for numeric, agreement for "
        "pairwise, where a verdict that flips with the order counts as a tie).",
    )
    split: JudgeSplit = Field(default_factory=JudgeSplit)
    gates: dict[str, float] = Field(default_factory=dict, alias="min")
    gate_on: Literal["ci", "point"] = "ci"
    resamples: int = Field(default=1000, ge=100, description="Bootstrap resamples per CI.")
    minibatch_size: int = Field(default=8, ge=2)
    concurrency: int = Field(default=8, ge=1)
    run_dir: str | None = Field(
        default=None, description="GEPA's state folder (default .assay/optimizations/ID)."
    )

    @model_validator(mode="before")
    @classmethod
    def _annotation_label(cls, value: Any) -> Any:
        wanted = isinstance(value, dict) and value.get("annotations") is not None
        if wanted and value.get("label") is None:
            return {**value, "label": "metadata.human_label"}
        return value

    @field_validator("label_map", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        from assay.calibration.config import label_text

        if isinstance(value, dict):
            return {label_text(k): v for k, v in value.items()}
        return value

    @field_validator("gates")
    @classmethod
    def _finite_gates(cls, value: dict[str, float]) -> dict[str, float]:
        for metric, bound in value.items():
            if not math.isfinite(bound):
                raise ValueError(f"gate {metric!r}: {bound} is not a finite number")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> JudgeOptimizeConfig:
        sources = [self.data, self.dataset, self.annotations]
        if sum(source is not None for source in sources) != 1:
            raise ValueError(
                "give exactly one of 'data' (a file), 'dataset' (a stored dataset) and "
                "'annotations' (a stored run whose annotations are the labels)"
            )
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        if self.sha256 is not None and self.data is None:
            raise ValueError("'sha256' needs 'data'")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ValueError("'threshold' must be a finite number")
        allowed = OBJECTIVES[self.kind]
        if self.objective is not None and self.objective not in allowed:
            raise ValueError(
                f"'objective' {self.objective!r} cannot be maximised for kind {self.kind!r} "
                f"(choose one of: {', '.join(allowed)})"
            )
        return self

    @property
    def objective_name(self) -> str:
        return self.objective or DEFAULT_OBJECTIVE[self.kind]

    def calibration_keys(self) -> dict[str, Any]:
        """The keys a ``CalibrationConfig`` reads the labels with."""
        keys = {
            "scorer": self.scorer,
            "label": self.label,
            "label_map": self.label_map,
            "label_range": self.label_range,
            "kind": self.kind,
            "threshold": self.threshold,
        }
        if self.data is not None:
            keys["data"] = self.data
        elif self.dataset is not None:
            keys["dataset"] = self.dataset
        else:
            keys["annotations"] = self.annotations
        return {k: v for k, v in keys.items() if v is not None}


def load_judge_optimize_config(path: str | Path, **overrides: Any) -> JudgeOptimizeConfig:
    """Read a YAML judge-optimization config; a relative ``data`` path and ``run_dir`` are
    relative to its folder. ``overrides`` (CLI flags that were given) win; ``min`` gates are
    merged with the file's."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise OptimizeConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise OptimizeConfigError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise OptimizeConfigError(f"{path}: expected a mapping at the top level")
    for key in ("data", "run_dir"):
        value = raw.get(key)
        if isinstance(value, str) and not Path(value).is_absolute():
            raw[key] = str(path.resolve().parent / value)
    given = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(given.get("min"), dict) and isinstance(raw.get("min"), dict):
        given["min"] = {**raw["min"], **given["min"]}
    return make_judge_optimize_config({**raw, **given}, source=str(path))


def make_judge_optimize_config(
    raw: dict[str, Any], *, source: str = "optimize-judge config"
) -> JudgeOptimizeConfig:
    """Validate ``raw``; the error names the key and, for an unknown key, the closest one."""
    try:
        return JudgeOptimizeConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        where = ".".join(loc) or "config"
        if first["type"] == "extra_forbidden":
            model: type[BaseModel] = JudgeOptimizeConfig
            if len(loc) > 1 and loc[0] == "budget":
                model = Budget
            elif len(loc) > 1 and loc[0] == "split":
                model = JudgeSplit
            keys = sorted({f.alias or name for name, f in model.model_fields.items()})
            close = difflib.get_close_matches(loc[-1], keys, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"unknown key {where!r}{hint} (allowed: {', '.join(keys)})"
        elif first["type"] == "missing":
            message = f"missing key {where!r}"
        else:
            message = f"key {where!r}: {first['msg']}"
        raise OptimizeConfigError(f"{source}: {message}", key=where) from exc
