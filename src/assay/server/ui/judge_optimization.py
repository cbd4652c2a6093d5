"""What an optimization page adds for a judge optimization (``assay optimize-judge``): the
seed's and the winner's agreement with the human labels on val and test, the paired
difference, the gates and the certificate, and the test confusion matrix before and after.

Read from the stored result alone (a judge result carries ``held_out``), so a task-prompt
optimization's page is unchanged and an older result without these keys shows nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.server.ui.svg_plots import confusion_svg

_SHOWN = {
    "binary": ("kappa", "mcc", "balanced_accuracy", "accuracy", "f1"),
    "ordinal": ("quadratic_weighted_kappa", "spearman", "kendall_tau_b", "mae"),
    "numeric": ("spearman", "pearson", "krippendorff_alpha_interval", "mae"),
    "pairwise": ("agreement", "position_bias_rate", "tie_rate"),
}


def _estimate(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry.get("value") is None:
        return "—"
    text = f"{entry['value']:.3f}"
    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
        text += f" [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"
    return text


def _statistics(split: Mapping[str, Any] | None, side: str) -> Mapping[str, Any]:
    if not isinstance(split, Mapping):
        return {}
    found = split.get(side)
    stats = found.get("statistics") if isinstance(found, Mapping) else None
    return stats if isinstance(stats, Mapping) else {}


def _confusion(split: Mapping[str, Any] | None, side: str) -> str | None:
    if not isinstance(split, Mapping):
        return None
    found = split.get(side)
    matrix = found.get("confusion_matrix") if isinstance(found, Mapping) else None
    if not isinstance(matrix, Mapping) or not isinstance(matrix.get("matrix"), list):
        return None
    return confusion_svg(dict(matrix))


def judge_view(result: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The judge section's data, or ``None`` when ``result`` is not a judge optimization's."""
    if not isinstance(result, Mapping) or "held_out" not in result:
        return None
    objective = str(result.get("objective") or "")
    kind = str(result.get("kind") or "")
    val, test = result.get("val"), result.get("held_out")
    difference = result.get("difference")
    difference = difference if isinstance(difference, Mapping) else {}
    rows = []
    for name in dict.fromkeys((objective, *_SHOWN.get(kind, ()))):
        rows.append(
            {
                "name": name,
                "cells": [
                    _estimate(_statistics(val, "seed").get(name)),
                    _estimate(_statistics(val, "best").get(name)),
                    _estimate(_statistics(test, "seed").get(name)),
                    _estimate(_statistics(test, "best").get(name)),
                    _estimate(difference.get(name)),
                ],
            }
        )
    gates = [g for g in result.get("gates") or [] if isinstance(g, Mapping)]
    return {
        "objective": objective,
        "kind": kind,
        "rows": rows,
        "test_n": test.get("n") if isinstance(test, Mapping) else None,
        "gates": gates,
        "certificate_id": result.get("certificate_id"),
        "confusion_seed": _confusion(test, "seed"),
        "confusion_best": _confusion(test, "best"),
    }
