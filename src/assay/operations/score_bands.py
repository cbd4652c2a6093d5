"""Whether a score is good or bad, as the run page colours it.

Colour alone fails readers who do not see it (and printouts), so each band comes with a
word and a mark: with a threshold (the scorer's own, else the run's level placed on the
scorer's scale) a score passes or fails; without one, a bounded score is ranked by where
it falls in its range (top quarter good, bottom quarter poor). The direction of the scorer
is respected: for a lower-is-better scorer a low score is the good one.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from assay.types import ScorerSpec, range_is_bounded, threshold_on_scale

Band = Literal["good", "mid", "bad"]


class ScoreBand(NamedTuple):
    band: Band
    word: str
    """What the band means, for screen readers and hover text: pass, fail, good, fair, poor."""
    mark: str
    """A shape that carries the band without colour: ✓ ✗ ▲ ● ▼."""


def scorer_threshold(spec: ScorerSpec, run_threshold: float | None) -> float | None:
    """The pass threshold on the scorer's own scale, ``None`` when there is none."""
    if spec.threshold is not None:
        return spec.threshold
    if run_threshold is not None and range_is_bounded(spec.score_range):
        return threshold_on_scale(
            run_threshold, spec.score_range, higher_is_better=spec.higher_is_better
        )
    return None


def score_band(score: float | None, spec: ScorerSpec, threshold: float | None) -> ScoreBand | None:
    """The band of ``score`` for ``spec`` (``threshold`` from ``scorer_threshold``);
    ``None`` when there is no number or nothing to judge it against."""
    if score is None or isinstance(score, bool):
        return None
    if threshold is not None:
        passed = score >= threshold if spec.higher_is_better else score <= threshold
        return ScoreBand("good", "pass", "✓") if passed else ScoreBand("bad", "fail", "✗")
    if not range_is_bounded(spec.score_range):
        return None
    level = spec.normalize(score)
    if level >= 0.75:
        return ScoreBand("good", "good", "▲")
    if level <= 0.25:
        return ScoreBand("bad", "poor", "▼")
    return ScoreBand("mid", "fair", "●")
