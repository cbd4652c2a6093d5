"""``JudgeOptimizeConfig``: a judge-prompt optimization described as data (YAML or keywords).

The search settings (reflection model, budget, minibatches, seed) are those of
``assay optimize`` (``SearchSettings``); the labelled data is read with the keys of a
calibration config (``data``/``dataset``/``annotations``, ``label``, ``label_map``,
``label_range``, ``kind``, ``threshold``), so a calibration config becomes an optimization
config by adding the search settings. A typo is an error naming the key: an optimization
that silently ignored ``min:`` would certify a judge nobody gated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from assay.calibration.config import GateKeys, LabelledDataKeys, SplitConfig
from assay.config_file import anchor_paths, merge_overrides, read_config_file, validate_config
from assay.optimize.config import Budget, OptimizeConfigError, SearchSettings

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


class JudgeSplit(SplitConfig):
    """How the labelled items are divided, by item id: ``val`` and ``test`` fractions (the
    rest is ``train``), seeded. A calibration's split (``test``, ``seed``) plus ``val``."""

    val: float = Field(default=0.25, gt=0.0, lt=1.0)
    test: float = Field(default=0.25, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _room_for_train(self) -> JudgeSplit:
        if self.val + self.test >= 1.0:
            raise ValueError("'val' + 'test' must leave items for 'train' (sum below 1)")
        return self


class JudgeOptimizeConfig(SearchSettings, LabelledDataKeys, GateKeys):
    """A judge's own prompt as the GEPA candidate, its agreement with human labels as the
    objective (see ``optimize.judge``). The labelled-data keys and gates are a calibration
    config's (``LabelledDataKeys``, ``GateKeys``), the search settings ``assay optimize``'s."""

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
    sha256: str | None = Field(
        default=None,
        description="The data file's content hash, recorded when the optimization starts: a "
        "resume refuses a file that changed since.",
    )
    objective: str | None = Field(
        default=None,
        description="The calibration statistic to maximise (default: kappa for binary, "
        "quadratic_weighted_kappa for ordinal, spearman for numeric, agreement for "
        "pairwise, where a verdict that flips with the order counts as a tie).",
    )
    split: JudgeSplit = Field(default_factory=JudgeSplit)
    minibatch_size: int = Field(default=8, ge=2)
    concurrency: int = Field(default=8, ge=1)
    run_dir: str | None = Field(
        default=None, description="GEPA's state folder (default .assay/optimizations/ID)."
    )

    @model_validator(mode="after")
    def _judge_consistent(self) -> JudgeOptimizeConfig:
        if self.sha256 is not None and self.data is None:
            raise ValueError("'sha256' needs 'data'")
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
        return {"scorer": self.scorer, **self.labelled_data_keys()}


def load_judge_optimize_config(path: str | Path, **overrides: Any) -> JudgeOptimizeConfig:
    """Read a YAML judge-optimization config; a relative ``data`` path and ``run_dir`` are
    relative to its folder. ``overrides`` (CLI flags that were given) win; ``min`` gates are
    merged with the file's."""
    path = Path(path)
    raw = read_config_file(path, error=OptimizeConfigError)
    anchor_paths(raw, ("data", "run_dir"), path.resolve().parent)
    return make_judge_optimize_config(
        merge_overrides(raw, overrides, merged=("min",)), source=str(path)
    )


def make_judge_optimize_config(
    raw: dict[str, Any], *, source: str = "optimize-judge config"
) -> JudgeOptimizeConfig:
    """Validate ``raw``; the error names the key and, for an unknown key, the closest one."""
    return validate_config(
        JudgeOptimizeConfig,
        raw,
        source=source,
        error=OptimizeConfigError,
        nested={"budget": Budget, "split": JudgeSplit},
    )
