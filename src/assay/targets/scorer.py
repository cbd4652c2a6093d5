"""A scorer as the target: judge calibration.

Each item describes an interaction already produced (``input``, ``output``) and carries the
human label in ``expected_output``. The target runs the scorer on it; its output is
``{"score", "reason"}`` (plus ``"status"`` when not ``ready``). The run's own scorers then
score that output against the label (meta-scorers).

A score that is not a finite number is stored as ``None`` with a warning instead of failing
the item; a scorer error becomes the item's error, so a broken judge shows up as errors, not
as low agreement.
"""

from __future__ import annotations

import math
from typing import Any

from assay.scoring.scorer import Scorer
from assay.targets.base import TargetOutput
from assay.types import Item, ScoreResult, TargetSpec


class ScorerTargetError(RuntimeError):
    """The scorer under calibration failed on this item."""


class ScorerTarget:
    """Runs ``scorer`` on each item's stored interaction."""

    def __init__(self, scorer: Scorer, *, ref: str | None = None) -> None:
        self.scorer = scorer
        config: dict[str, Any] = {}
        if scorer.type_id is not None:
            config = {"type": scorer.type_id, "params": dict(scorer.params)}
        self._spec = TargetSpec(
            kind="scorer", label=f"scorer {scorer.label}", ref=ref, config=config
        )

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    async def execute(self, item: Item) -> TargetOutput:
        result = await self.scorer.run(
            input=item.input,
            output=item.output,
            ground_truth=item.expected_output,
            context=item.context,
            metadata=dict(item.metadata),
        )
        return scorer_output(result)


def scorer_output(result: ScoreResult | Any) -> TargetOutput:
    """The ``{score, reason}`` output of a scorer result; errors raise."""
    status = getattr(result, "status", "ready")
    if status == "error":
        error = getattr(result, "error", None)
        message = getattr(error, "message", None) or "scorer failed"
        raise ScorerTargetError(message)
    score, warnings = valid_score(getattr(result, "score", None))
    output: dict[str, Any] = {"score": score, "reason": getattr(result, "reason", None)}
    if status != "ready":
        output["status"] = status
    return TargetOutput(output, warnings)


def valid_score(value: Any) -> tuple[float | None, tuple[str, ...]]:
    """``value`` as a finite float, or ``None`` with a warning saying why."""
    if value is None:
        return None, ()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, (f"scorer returned a non-numeric score {value!r}; stored as null",)
    if not math.isfinite(value):
        return None, (f"scorer returned {value!r}; stored as null",)
    return float(value), ()
