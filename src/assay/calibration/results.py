"""What a calibration returns: one ``ScorerCalibration`` per scorer in a ``CalibrationReport``.

The report's JSON (``CalibrationReport.to_json()``) is the one shape ``assay calibrate --json``
writes and the terminal tables and HTML section read (``calibration.report``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.calibration.gates import GateResult
from assay.store import Certificate


class ScorerCalibration(BaseModel):
    """One scorer's calibration: its run, statistics, sections and certificate."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scorer_id: str
    scorer_label: str
    scorer_type: str
    fingerprint: str
    judge_model: str | None
    run_id: str
    n: int
    errors: list[dict[str, Any]] = Field(default_factory=list)
    statistics: dict[str, dict[str, Any]]
    confusion_matrix: dict[str, Any] | None = None
    reliability: dict[str, Any] | None = None
    splits: dict[str, dict[str, Any]] = Field(default_factory=dict)
    self_consistency: dict[str, Any] | None = None
    position_bias: dict[str, Any] | None = None
    disagreements: list[dict[str, Any]] = Field(default_factory=list)
    points: list[dict[str, Any]] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
    passed: bool = True
    certificate: Certificate | None = None


class CalibrationReport(BaseModel):
    """What ``calibrate`` returns and ``--json`` writes."""

    name: str | None
    kind: str
    label: str
    data_key: str
    threshold: float | None
    repeats: int
    split: dict[str, Any] | None
    gate_on: str
    items: int
    scorers: list[ScorerCalibration]
    comparison: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.scorers)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data: per scorer every statistic under its plain name
        (``statistics.kappa.value``/``ci_low``/``ci_high``/``n``), and at the top level the
        first scorer's statistics too, so ``kappa`` is one lookup away."""
        data = self.model_dump(mode="json", exclude={"scorers": {"__all__": {"points"}}})
        data["passed"] = self.passed
        if self.scorers:
            data["statistics"] = data["scorers"][0]["statistics"]
        return data
