"""A calibration's gates: the bounds a scorer's statistics must clear to be certified.

``min`` gates bound a statistic (its CI's lower end, or its estimate with
``gate_on: point``); ``require`` gates ask that a statistic be defined with a CI. A gate on a
statistic the calibration's ``kind`` does not have is refused before anything runs
(``check_gate_names``): a typo must not cost a paid judge run. ``optimize-judge`` checks its
held-out test with the same functions, so both commands pass and fail alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from assay.calibration.config import CalibrationConfig, CalibrationConfigError
from assay.calibration.measures import LOWER_IS_BETTER

DEFAULT_THRESHOLD = 0.5
"""The verdict threshold of a binary calibration whose config sets none."""


class GateResult(BaseModel):
    """One gate: a ``min`` gate (``statistic`` must be at least ``bound``: its CI's lower end
    with ``on="ci"``, its value with ``on="point"``) or a ``require`` gate (``on="defined"``,
    no bound: the statistic must have a value and a CI)."""

    statistic: str
    bound: float | None
    on: str
    observed: float | None
    passed: bool
    reason: str


def threshold_of(config: CalibrationConfig) -> float | None:
    if config.kind == "binary":
        return DEFAULT_THRESHOLD if config.threshold is None else config.threshold
    return config.threshold


def check_gates(
    statistics: Mapping[str, Mapping[str, Any]], gates: Mapping[str, float], on: str
) -> list[GateResult]:
    """Each gate's outcome. An unknown statistic is a config error (naming the ones there
    are); an undefined one fails its gate (no evidence is not a pass)."""
    results: list[GateResult] = []
    for name, bound in gates.items():
        if name in LOWER_IS_BETTER:
            raise CalibrationConfigError(
                f"key 'min': {name!r} is lower-is-better; a minimum on it is meaningless"
            )
        if name not in statistics:
            known = ", ".join(sorted(statistics))
            raise CalibrationConfigError(
                f"key 'min': no statistic {name!r} for this calibration (there are: {known})"
            )
        estimate = statistics[name]
        observed = estimate.get("ci_low" if on == "ci" else "value")
        if observed is None:
            why = estimate.get("reason") or "undefined"
            results.append(
                GateResult(
                    statistic=name,
                    bound=bound,
                    on=on,
                    observed=None,
                    passed=False,
                    reason=f"{name} has no {'CI' if on == 'ci' else 'value'}: {why}",
                )
            )
            continue
        passed = float(observed) >= bound
        what = "lower 95% CI bound" if on == "ci" else "estimate"
        relation = ">=" if passed else "<"
        results.append(
            GateResult(
                statistic=name,
                bound=bound,
                on=on,
                observed=float(observed),
                passed=passed,
                reason=f"{name} {what} {float(observed):.4g} {relation} {bound:g}",
            )
        )
    return results


def check_requirements(
    statistics: Mapping[str, Mapping[str, Any]], required: Sequence[str]
) -> list[GateResult]:
    """One gate per ``require``d statistic: it passes only when the statistic has a value
    and a CI. An undefined statistic is no evidence, so it fails (and the certificate it
    goes into says ``passed: false``)."""
    results: list[GateResult] = []
    for name in required:
        estimate = statistics.get(name, {})
        defined = estimate.get("value") is not None and estimate.get("ci_low") is not None
        why = estimate.get("reason") or "undefined"
        results.append(
            GateResult(
                statistic=name,
                bound=None,
                on="defined",
                observed=estimate.get("value") if defined else None,
                passed=defined,
                reason=f"{name} is defined with a CI"
                if defined
                else f"{name} is required but has no CI: {why}",
            )
        )
    return results


def check_gate_names(config: CalibrationConfig) -> None:
    """Refuse a gate (``min`` or ``require``) on a statistic the ``kind`` does not have (or
    a ``min`` on a lower-is-better one) before anything runs, naming the ones there are."""
    from assay.calibration.statistics import STATISTICS

    known = STATISTICS[config.kind]
    for name in config.require:
        if name not in known:
            raise CalibrationConfigError(
                f"key 'require': no statistic {name!r} for kind {config.kind!r} "
                f"(there are: {', '.join(sorted(known))})"
            )
    for name in config.gates:
        if name in LOWER_IS_BETTER:
            raise CalibrationConfigError(
                f"key 'min': {name!r} is lower-is-better; a minimum on it is meaningless"
            )
        if name not in known:
            raise CalibrationConfigError(
                f"key 'min': no statistic {name!r} for kind {config.kind!r} "
                f"(there are: {', '.join(sorted(known))})"
            )
