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


def certificate_judge_corrected(
    certificate_id: str, *, run_id: str | None = None, store: Store | None = None
) -> dict[str, Any]:
    """The judge-corrected mean of a certificate's scorer on a stored run (default: the
    certificate's own calibration run), as ``judge_corrected_means`` gives it plus
    ``run_id`` and ``scorer_id``.

    On the calibration run (the scorer was its target; every item is labelled) the
    labels it recorded on the scorer's scale are used, so the corrected mean is the human
    mean. On another run the scorer is the one with the certificate's fingerprint (the
    judge the certificate vouches for), and its labelled items are read with the label
    field, ``label_map`` and ``label_range`` the calibration recorded. ``LookupError``
    names what is missing: the certificate, the run, the scorer in that run."""
    from assay.calibration.view import calibration_view

    with using_store(store) as db:
        certificate = db.certificates.get(certificate_id)
        if certificate.run_id is None:
            raise LookupError("the certificate links no calibration run")
        calibration = db.runs.get(certificate.run_id).info
        recorded = (calibration.metadata or {}).get("calibration") or {}
        if run_id is None or db.runs.get(run_id).info.id == calibration.id:
            view = calibration_view(certificate.id, store=db)
            if view.note:
                raise LookupError(view.note)
            scores = np.array([p.score for p in view.points], dtype=np.float64)
            labels = np.array([p.label for p in view.points], dtype=np.float64)
            scorer_id = str(recorded.get("scorer") or certificate.scorer_label)
            return {
                "run_id": calibration.id,
                "scorer_id": scorer_id,
                **ppi_json(scores, scores, labels),
            }
        target = db.runs.get(run_id).info
        spec = next((s for s in target.scorers if s.fingerprint == certificate.fingerprint), None)
        if spec is None:
            names = ", ".join(s.id for s in target.scorers) or "none"
            raise LookupError(
                f"run {target.id} has no scorer with this certificate's fingerprint "
                f"(its scorers: {names})"
            )
        label_map = recorded.get("label_map")
        span = recorded.get("label_range")
        label_range = (
            (float(span[0]), float(span[1])) if isinstance(span, list) and len(span) == 2 else None
        )
        corrected = judge_corrected_means(
            target.id,
            label=str(recorded.get("label") or DEFAULT_HUMAN_LABEL),
            label_map=label_map if isinstance(label_map, Mapping) else None,
            label_range=label_range,
            store=db,
        )[spec.id]
    return {"run_id": target.id, "scorer_id": spec.id, **corrected}


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
