"""What the calibration statistics return: pydantic models that serialise to plain JSON."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from assay.calibration.statistics.estimate import Estimate, undefined_json

Kind = Literal["binary", "ordinal", "numeric", "pairwise"]


class ConfusionMatrix(BaseModel):
    """Counts of human label (1 = positive) against the verdict ``score >= threshold``."""

    model_config = ConfigDict(frozen=True)

    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int


class ReliabilityBin(BaseModel):
    """One bin of the reliability curve: scores in ``(low, high]`` (the first bin also
    holds ``low``), binned the way ``sklearn.calibration.calibration_curve`` bins them.
    ``mean_predicted`` and ``observed_frequency`` are ``None`` for an empty bin."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    count: int
    mean_predicted: float | None
    observed_frequency: float | None


class ReliabilityCurve(BaseModel):
    """Mean score against the share of positive labels per score bin (``ece`` is in the
    statistics, with its CI)."""

    model_config = ConfigDict(frozen=True)

    bins: list[ReliabilityBin]


class StatisticsTable(BaseModel):
    """Named estimates, plus the reason for each statistic that is undefined on the data.

    ``table["kappa"]`` and ``table.get("kappa")`` give the ``Estimate`` or ``None``;
    ``table.reason("kappa")`` says why it is ``None``. An unknown name raises ``KeyError``.
    """

    model_config = ConfigDict(frozen=True)

    n: int
    statistics: dict[str, Estimate]
    undefined: dict[str, str]
    points: dict[str, float] = Field(default_factory=dict)
    """Point values of statistics in ``undefined`` that are defined on the data but whose
    bootstrap CI is not (too many undefined resamples)."""

    def names(self) -> list[str]:
        """Every statistic of the table, defined or not, in a stable order."""
        return sorted({*self.statistics, *self.undefined})

    def __getitem__(self, name: str) -> Estimate | None:
        if name in self.statistics:
            return self.statistics[name]
        if name in self.undefined:
            return None
        raise KeyError(f"no statistic {name!r}; have {', '.join(self.names())}")

    def get(self, name: str) -> Estimate | None:
        """The estimate, or ``None`` when it is undefined or not a statistic of this kind."""
        return self.statistics.get(name)

    def reason(self, name: str) -> str | None:
        """Why ``name`` is undefined (``None`` when it is defined)."""
        return self.undefined.get(name)

    def to_json(self) -> dict[str, Any]:
        """``{name: {"value", "ci_low", "ci_high", "n"}}``; a statistic without a CI has the
        same keys set to null (``value`` kept when only the CI is undefined) plus
        ``"reason"``."""
        out: dict[str, Any] = {}
        for name in self.names():
            estimate = self.statistics.get(name)
            out[name] = (
                estimate.to_json()
                if estimate is not None
                else undefined_json(self.n, self.undefined[name], self.points.get(name))
            )
        return out


class CalibrationStats(StatisticsTable):
    """Every statistic of one calibration kind, each with its bootstrap CI.

    ``to_json()`` holds the statistics only (the shape of ``assay calibrate --json``);
    ``model_dump(mode="json")`` holds everything, curves included."""

    kind: Kind
    threshold: float | None
    n_resamples: int
    seed: int
    confusion_matrix: ConfusionMatrix | None = None
    reliability_curve: ReliabilityCurve | None = None


class PairedDifference(StatisticsTable):
    """Statistic of configuration A minus the same statistic of B, on the same items, each
    with a paired bootstrap CI (both computed on the same resamples)."""

    kind: Kind
    threshold: float | None
    n_resamples: int
    seed: int


class SelfConsistency(StatisticsTable):
    """How much a scorer agrees with itself over repeats of the same items.

    Statistics: ``mean_spread`` (mean over items of max - min), ``flip_rate`` (share of
    items whose verdicts at the threshold differ between repeats),
    ``krippendorff_alpha_interval`` (repeats as coders). ``spread`` is the per-item spread
    (``None`` for an item with fewer than two scored repeats), ``flipped`` per item."""

    threshold: float | None
    n_resamples: int
    seed: int
    spread: list[float | None]
    flipped: list[bool] | None


class PPIEstimate(Estimate):
    """A prediction-powered mean: ``value`` with a normal-theory CI; ``n`` is every item
    the judge scored, ``n_labelled`` those with a human label too; ``judge_mean`` is the
    plain judge mean to show beside it; ``weight`` is the power-tuning λ (1 = classical
    PPI, 0 = the labelled items alone); ``warning`` says when the labelled set was too
    small to estimate the rectifier's variance (it was floored)."""

    n_labelled: int
    judge_mean: float
    weight: float = 1.0
    warning: str | None = None


DisagreementKind = Literal["judge_high_human_low", "judge_low_human_high"]


class Disagreement(NamedTuple):
    """An item where the judge's verdict differs from the humans': a tuple
    ``(position, kind, gap, label, score)``; ``position`` is the item's index in the
    arrays given (``index`` would shadow ``tuple.index``)."""

    position: int
    kind: DisagreementKind
    gap: float
    label: float
    score: float
