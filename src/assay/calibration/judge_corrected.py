"""Judge-corrected means: a run judged on many items, some of which carry a human label.

The plain judge mean inherits every bias of the judge. Prediction-powered inference
(Angelopoulos et al. 2023) corrects it with the labelled subset: the judge's mean on all
items plus the mean human-minus-judge gap on the labelled ones, with a CI that accounts for
both parts (``assay.calibration.statistics.ppi_mean``). Both are reported side by side, so a
reader sees how far the judge alone would have misled them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from assay.calibration.config import CalibrationConfig, label_text
from assay.calibration.data import label_value
from assay.calibration.measures import ppi_json
from assay.store import Store, using_store
from assay.types import Item

DEFAULT_HUMAN_LABEL = "metadata.human_label"


def _human_labels(
    items: Iterable[Item], label: str, label_map: Mapping[str, float] | None
) -> dict[str, float]:
    labels: dict[str, float] = {}
    for item in items:
        try:
            raw = label_value(item, label)
        except KeyError:
            continue
        if raw is None:
            continue
        if label_map is not None:
            key = label_text(raw)
            if key not in label_map:
                raise ValueError(
                    f"item {item.id!r}: human label {raw!r} at {label!r} is not in label_map "
                    f"({', '.join(map(repr, label_map))})"
                )
            labels[item.id] = float(label_map[key])
        elif isinstance(raw, int | float) and not isinstance(raw, bool):
            labels[item.id] = float(raw)
        else:
            raise ValueError(
                f"item {item.id!r}: human label {raw!r} at {label!r} is not a number; "
                "pass label_map"
            )
    return labels


def judge_corrected_means(
    run_id: str,
    *,
    label: str = DEFAULT_HUMAN_LABEL,
    label_map: Mapping[str, float] | None = None,
    label_range: tuple[float, float] | None = None,
    store: Store | None = None,
) -> dict[str, dict[str, Any]]:
    """Per scorer of a stored run: the prediction-powered mean (``value`` with its 95% CI)
    beside the plain ``judge_mean``, from the items whose ``label`` (an item field or
    ``metadata.x``) holds a human label. ``label_range`` maps the human scale onto the
    scorer's score range. A scorer with too few labelled items gets ``value: null`` and a
    ``reason``."""
    with using_store(store) as db:
        record = db.runs.get(run_id)
        info = record.info
        if info.dataset_id is not None:
            items: Iterable[Item] = db.datasets.items(info.dataset_id, info.dataset_version)
        else:
            items = db.runs.inline_items(info.id)
        humans = _human_labels(items, label, label_map)
        per_scorer: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for result in db.runs.results(info.id):
            for scorer_id, score in result.scores.items():
                if score.status == "ready" and score.score is not None:
                    per_scorer[scorer_id][result.item_id].append(float(score.score))
    out: dict[str, dict[str, Any]] = {}
    for spec in info.scorers:
        scores = {k: float(np.mean(v)) for k, v in per_scorer.get(spec.id, {}).items()}
        labelled = [k for k in scores if k in humans]
        human = np.array([humans[k] for k in labelled], dtype=np.float64)
        if label_range is not None:
            (low, high), (to_low, to_high) = label_range, spec.score_range
            human = to_low + (human - low) * (to_high - to_low) / (high - low)
        out[spec.id] = ppi_json(
            np.array(list(scores.values()), dtype=np.float64),
            np.array([scores[k] for k in labelled], dtype=np.float64),
            human,
        )
    return out


def judge_corrected_for_config(
    config: CalibrationConfig, run_id: str, *, store: Store | None = None
) -> dict[str, dict[str, Any]]:
    """``judge_corrected_means`` of a stored run, reading its human labels the way the
    calibration ``config`` reads them (``label``, ``label_map``, ``label_range``): what
    ``assay calibrate --ppi RUN`` prints and writes as ``judge_corrected``."""
    return judge_corrected_means(
        run_id,
        label=config.label,
        label_map=config.label_map,
        label_range=config.label_range,
        store=store,
    )
