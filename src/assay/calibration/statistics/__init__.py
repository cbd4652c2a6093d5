"""Judge calibration statistics: how well a scorer agrees with human labels, with CIs.

Pure functions of arrays (numpy, scipy, scikit-learn, krippendorff); no store, no runner.
The calibration runs, config, CLI, certificates and reports (``assay.calibration.run``)
are built on these names:

- ``calibration_statistics(kind, labels, scores, threshold=..., n_resamples=..., seed=...)``
  -> ``CalibrationStats``: every statistic of the kind by its plain name (``kappa``,
  ``roc_auc``, ``spearman``, ...) as an ``Estimate`` (value, 95% bootstrap CI, n), or
  ``None`` with a reason; ``.to_json()`` is ``{name: {value, ci_low, ci_high, n}}``.
- ``paired_difference(kind, labels, scores_a, scores_b, ...)`` -> ``PairedDifference``.
- ``self_consistency(repeats, threshold=...)`` -> ``SelfConsistency``.
- ``ppi_mean(judge_all, judge_labelled, human_labelled)`` -> ``PPIEstimate``.
- ``disagreements(labels, scores, threshold=...)`` -> ``list[Disagreement]``.
"""

from __future__ import annotations

from assay.calibration.statistics.consistency import self_consistency
from assay.calibration.statistics.disagreements import disagreements
from assay.calibration.statistics.estimate import Estimate
from assay.calibration.statistics.ppi import ppi_mean
from assay.calibration.statistics.results import (
    CalibrationStats,
    ConfusionMatrix,
    Disagreement,
    DisagreementKind,
    Kind,
    PairedDifference,
    PPIEstimate,
    ReliabilityBin,
    ReliabilityCurve,
    SelfConsistency,
    StatisticsTable,
)
from assay.calibration.statistics.statistics import (
    STATISTICS,
    calibration_statistics,
    paired_difference,
)

__all__ = [
    "STATISTICS",
    "CalibrationStats",
    "ConfusionMatrix",
    "Disagreement",
    "DisagreementKind",
    "Estimate",
    "Kind",
    "PPIEstimate",
    "PairedDifference",
    "ReliabilityBin",
    "ReliabilityCurve",
    "SelfConsistency",
    "StatisticsTable",
    "calibration_statistics",
    "disagreements",
    "paired_difference",
    "ppi_mean",
    "self_consistency",
]
