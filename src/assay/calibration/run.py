"""``assay calibrate``: how well a scorer agrees with human labels, as a stored run, a
report with every statistic's confidence interval, gates and a certificate.

A calibration is a run with the scorer as its target (``ScorerTarget``) over labelled
items, so it is stored, listed by ``runs list`` and resumable like any run. Then the
scorer's scores are set against the human labels:

* every statistic of the ``kind`` with a seeded bootstrap 95% CI (``calibration.statistics``);
* with a ``split``: the same per split, and the gates judge the held-out ``test`` part, so a
  prompt iterated on ``dev`` is not graded on its own exam;
* with ``repeats`` > 1: the scorer's self-consistency (an item's score is its mean);
* pairwise: each pair is judged in both orders; a verdict that flips with the order is
  position bias and counts as a tie;
* several scorers: paired bootstrap differences of each statistic against the first;
* the items where scorer and humans disagree most, with the judge's reason;
* a certificate per scorer bound to its fingerprint and the labelled data.

An item whose scorer failed (every repeat) is left out of the statistics and *counted* in
``errors``: the statistics say on how many items they stand (``n``).

This is the one module of the calibration room above ``operations`` (it runs the scorer
through ``operations.stored_runs``); the gates (``gates``), the report models (``results``)
and the files ``assay calibrate`` writes (``report``) sit below it, where ``optimize-judge``,
run reports and the web UI use them too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.calibration.certificates import certificate_parts, judge_model_of, scorer_identity
from assay.calibration.config import (
    CalibrationConfig,
    CalibrationConfigError,
    CalibrationKind,
    load_calibration_config,
    make_calibration_config,
)
from assay.calibration.data import (
    SWAPPED_SUFFIX,
    CalibrationDataError,
    LabelledItem,
    dataset_data_key,
    file_data_key,
    labelled_items,
    pairwise_run_items,
)
from assay.calibration.gates import (
    check_gate_names,
    check_gates,
    check_requirements,
    threshold_of,
)
from assay.calibration.measures import (
    FloatArray,
    as_array,
    confusion_json,
    ordinal_predictions,
    paired_differences_json,
    self_consistency_json,
    statistics_json,
)
from assay.calibration.results import CalibrationReport, ScorerCalibration
from assay.extras import require_extra
from assay.runner.options import Backend, RunOptions
from assay.runner.scorer_set import build_scorers
from assay.scoring.scorer import Scorer
from assay.scoring.sync import run_sync
from assay.store import Certificate, Store, StoreError, using_store
from assay.targets.scorer import ScorerTarget
from assay.types import Item, ItemResult

HIGH, LOW = "scorer high, humans low", "scorer low, humans high"
"""The two dangerous cells of a disagreement."""


def _scores_by_item(
    results: Sequence[ItemResult],
) -> tuple[dict[str, dict[int, float]], dict[str, str | None], dict[str, str]]:
    scores: dict[str, dict[int, float]] = defaultdict(dict)
    reasons: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for result in results:
        output = result.output if isinstance(result.output, Mapping) else None
        score = output.get("score") if output is not None else None
        if result.error is not None or score is None:
            message = result.error.message if result.error is not None else "no score"
            errors.setdefault(result.item_id, message)
            continue
        scores[result.item_id][result.repeat] = float(score)
        reason = output.get("reason") if output is not None else None
        reasons.setdefault(result.item_id, None if reason is None else str(reason))
    return scores, reasons, errors


_LETTER = {1.0: "A", 0.0: "B", 0.5: "tie"}
_NUMBER = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _pair_verdict(score: float, *, swapped: bool) -> str:
    """A pairwise score as a verdict on the pair in its original order: above 0.5 prefers
    the output shown first, which after the swap is the original second (``B``)."""
    if score == 0.5:
        return "tie"
    first_wins = score > 0.5
    return "A" if first_wins != swapped else "B"


class _Observed(BaseModel):
    """The per-item numbers of one scorer on the labelled items it scored."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    entries: list[LabelledItem]
    scores: list[float]
    reasons: list[str | None]
    by_repeat: list[list[float]]
    errors: list[dict[str, Any]]
    pair_verdicts: list[tuple[str, str]] = Field(default_factory=list)


def _out_of_range(repeats: Mapping[int, float], score_range: tuple[float, float]) -> float | None:
    """The first score outside the scorer's declared range (or ``None``): such a score is
    an item error, not a value that silently makes ECE or the reliability curve undefined."""
    low, high = score_range
    for value in repeats.values():
        if not (low - 1e-9 <= value <= high + 1e-9):
            return value
    return None


def _observe(
    labelled: list[LabelledItem],
    results: Sequence[ItemResult],
    config: CalibrationConfig,
    score_range: tuple[float, float] = (-math.inf, math.inf),
) -> _Observed:
    scores, reasons, errors = _scores_by_item(results)
    kept: list[LabelledItem] = []
    values: list[float] = []
    kept_reasons: list[str | None] = []
    by_repeat: list[list[float]] = []
    failed: list[dict[str, Any]] = []
    pair_verdicts: list[tuple[str, str]] = []
    for entry in labelled:
        item_id = entry.item.id
        if config.kind == "pairwise":
            first, second = scores.get(item_id), scores.get(item_id + SWAPPED_SUFFIX)
            if not first or not second:
                message = errors.get(item_id) or errors.get(item_id + SWAPPED_SUFFIX) or "no score"
                failed.append({"item_id": item_id, "error": message})
                continue
            forward = _pair_verdict(float(np.mean(list(first.values()))), swapped=False)
            backward = _pair_verdict(float(np.mean(list(second.values()))), swapped=True)
            pair_verdicts.append((forward, backward))
            kept.append(entry)
            values.append(_NUMBER[forward] if forward == backward else 0.5)
            kept_reasons.append(reasons.get(item_id))
            continue
        repeats = scores.get(item_id)
        if not repeats:
            failed.append({"item_id": item_id, "error": errors.get(item_id, "no score")})
            continue
        outside = _out_of_range(repeats, score_range)
        if outside is not None:
            low, high = score_range
            failed.append(
                {
                    "item_id": item_id,
                    "error": f"score {outside:g} is outside the scorer's declared range "
                    f"[{low:g}, {high:g}]",
                }
            )
            continue
        kept.append(entry)
        values.append(float(np.mean(list(repeats.values()))))
        kept_reasons.append(reasons.get(item_id))
        by_repeat.append([repeats.get(r, math.nan) for r in range(config.repeats)])
    return _Observed(
        entries=kept,
        scores=values,
        reasons=kept_reasons,
        by_repeat=by_repeat,
        errors=failed,
        pair_verdicts=pair_verdicts,
    )


def _statistic_inputs(
    kind: str, labels: FloatArray, scores: FloatArray, pairs: Sequence[tuple[str, str]]
) -> tuple[Any, Any]:
    """Labels and scores as the statistics room takes them: numbers, or for pairwise the
    human verdict letters and each pair's (original order, swapped order) verdicts."""
    if kind == "pairwise":
        return [_LETTER[float(v)] for v in labels], list(pairs)
    return labels, scores


def _sections(
    kind: CalibrationKind,
    labels: FloatArray,
    scores: FloatArray,
    threshold: float | None,
    config: CalibrationConfig,
    pairs: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    section: dict[str, Any] = {"n": len(labels)}
    stat_labels, stat_scores = _statistic_inputs(kind, labels, scores, pairs)
    section.update(
        statistics_json(
            kind,
            stat_labels,
            stat_scores,
            threshold=threshold,
            n_resamples=config.resamples,
            seed=config.seed,
        )
    )
    if kind == "ordinal":
        section["confusion_matrix"] = confusion_json(labels, ordinal_predictions(labels, scores))
    return section


def _normalised(values: FloatArray) -> FloatArray:
    low, high = float(values.min()), float(values.max())
    if high == low:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def _disagreements(
    observed: _Observed,
    labels: FloatArray,
    scores: FloatArray,
    config: CalibrationConfig,
    threshold: float | None,
) -> list[dict[str, Any]]:
    """The items where scorer and humans disagree most, with ``direction`` naming the
    dangerous cell. Binary: the verdicts that differ at the threshold, largest gap first
    (``assay.calibration.statistics.disagreements``). Otherwise both sides are put on [0, 1]
    (min-max over the items) and ranked by the gap."""
    if config.disagreements == 0:
        return []
    ranked: list[tuple[int, float, bool]]  # (position, gap, scorer higher than humans)
    if config.kind == "binary" and threshold is not None:
        from assay.calibration.statistics import disagreements

        found = disagreements(labels, scores, threshold=threshold, limit=config.disagreements)
        ranked = [(d.position, d.gap, d.kind == "judge_high_human_low") for d in found]
    else:
        signed = _normalised(scores) - _normalised(labels)
        order = np.argsort(-np.abs(signed), kind="stable")[: config.disagreements]
        ranked = [(int(i), float(abs(signed[i])), bool(signed[i] > 0)) for i in order if signed[i]]
    rows: list[dict[str, Any]] = []
    for index, gap, scorer_high in ranked:
        entry = observed.entries[index]
        rows.append(
            {
                "item_id": entry.item.id,
                "input": entry.item.input,
                "output": entry.item.output,
                "context": entry.item.context,
                "label": entry.raw_label,
                "label_value": entry.label,
                "score": float(scores[index]),
                "reason": observed.reasons[index],
                "gap": gap,
                "direction": "scorer high, humans low"
                if scorer_high
                else "scorer low, humans high",
                "split": entry.split,
            }
        )
    return rows


def _on_scorer_scale(labels: FloatArray, scorer: Scorer, config: CalibrationConfig) -> FloatArray:
    """Numeric/ordinal labels on the scorer's scale: mapped from ``label_range`` when
    given; otherwise they must already lie in the scorer's range, or MAE, RMSE and α would
    compare a 0..5 human scale with a 0..1 score and be silently meaningless."""
    if config.kind not in ("numeric", "ordinal"):
        return labels
    low, high = scorer.score_range
    if config.label_range is not None:
        from_low, from_high = config.label_range
        outside = (labels < from_low) | (labels > from_high)
        if outside.any():
            bad = float(labels[int(np.flatnonzero(outside)[0])])
            raise CalibrationDataError(
                f"a label is {bad:g}, outside key 'label_range' [{from_low:g}, {from_high:g}]"
            )
        return low + (labels - from_low) * (high - low) / (from_high - from_low)
    if math.isfinite(low) and math.isfinite(high) and ((labels < low) | (labels > high)).any():
        raise CalibrationDataError(
            f"labels span {labels.min():g}..{labels.max():g} but scorer {scorer.id!r} scores "
            f"on {low:g}..{high:g}: set key 'label_range' (e.g. [{labels.min():g}, "
            f"{labels.max():g}]) to map the human scale onto the scorer's"
        )
    return labels


def _calibrate_one(
    scorer: Scorer,
    labelled: list[LabelledItem],
    run_id: str,
    results: Sequence[ItemResult],
    config: CalibrationConfig,
) -> ScorerCalibration:
    threshold = threshold_of(config)
    low, high = scorer.score_range
    observed = _observe(labelled, results, config, (float(low), float(high)))
    if len(observed.entries) < 2:
        raise ValueError(
            f"scorer {scorer.id!r} scored {len(observed.entries)} of {len(labelled)} items "
            f"(errors: {observed.errors[:3]}); nothing to calibrate (run {run_id[:8]})"
        )
    labels = _on_scorer_scale(as_array([e.label for e in observed.entries]), scorer, config)
    scores = as_array(observed.scores)
    pairs = observed.pair_verdicts
    overall = _sections(config.kind, labels, scores, threshold, config, pairs)
    splits: dict[str, dict[str, Any]] = {}
    if config.split is not None:
        for part in ("dev", "test"):
            mask = np.array([e.split == part for e in observed.entries])
            if mask.sum() >= 2:
                chosen = [p for p, keep in zip(pairs, mask, strict=False) if keep]
                splits[part] = _sections(
                    config.kind, labels[mask], scores[mask], threshold, config, chosen
                )
            else:
                splits[part] = {
                    "n": int(mask.sum()),
                    "statistics": {},
                    "reason": "fewer than 2 scored items",
                }
    gated = (
        splits.get("test", overall)["statistics"]
        if config.split is not None
        else overall["statistics"]
    )
    gates = check_gates(gated, config.gates, config.gate_on) + check_requirements(
        gated, config.require
    )
    consistency = None
    if config.repeats > 1 and config.kind != "pairwise":
        consistency = self_consistency_json(
            np.array(observed.by_repeat, dtype=np.float64),
            threshold,
            n_resamples=config.resamples,
            seed=config.seed,
        )
    position = None
    if config.kind == "pairwise":
        flipped = [e.item.id for e, (a, b) in zip(observed.entries, pairs, strict=True) if a != b]
        position = {
            "pairs": len(pairs),
            "flips": len(flipped),
            "flipped_items": flipped,
            "note": "a verdict that changes when the two outputs swap places counts as a tie",
        }
    scorer_type, _ = scorer_identity(scorer)
    return ScorerCalibration(
        scorer_id=scorer.id,
        scorer_label=scorer.label,
        scorer_type=scorer_type,
        fingerprint=scorer.fingerprint,
        judge_model=judge_model_of(scorer),
        run_id=run_id,
        n=len(observed.entries),
        errors=observed.errors,
        statistics=overall["statistics"],
        confusion_matrix=overall.get("confusion_matrix"),
        reliability=overall.get("reliability"),
        splits=splits,
        self_consistency=consistency,
        position_bias=position,
        disagreements=_disagreements(observed, labels, scores, config, threshold),
        points=[
            {"item_id": e.item.id, "label": float(y), "score": float(s), "split": e.split}
            | ({"verdicts": list(pairs[i])} if pairs else {})
            for i, (e, y, s) in enumerate(zip(observed.entries, labels, scores, strict=True))
        ],
        gates=gates,
        passed=all(g.passed for g in gates),
    )


def _comparison(
    first: ScorerCalibration,
    other: ScorerCalibration,
    config: CalibrationConfig,
) -> dict[str, Any]:
    """Paired differences (other minus first) on the items both scored."""
    a = {p["item_id"]: p for p in first.points}
    b = {p["item_id"]: p for p in other.points}
    common = [item_id for item_id in a if item_id in b]
    labels = as_array([a[i]["label"] for i in common])
    if config.kind == "pairwise":
        stat_labels: Any = [_LETTER[float(v)] for v in labels]
        baseline: Any = [tuple(a[i]["verdicts"]) for i in common]
        candidate: Any = [tuple(b[i]["verdicts"]) for i in common]
    else:
        stat_labels = labels
        baseline = as_array([a[i]["score"] for i in common])
        candidate = as_array([b[i]["score"] for i in common])
    differences = paired_differences_json(
        config.kind,
        stat_labels,
        baseline,
        candidate,
        threshold=threshold_of(config),
        n_resamples=config.resamples,
        seed=config.seed,
    )
    return {
        "baseline": first.scorer_id,
        "candidate": other.scorer_id,
        "n": len(common),
        "differences": differences,
    }


def as_calibration_config(
    config: CalibrationConfig | Mapping[str, Any] | str | Path, **overrides: Any
) -> CalibrationConfig:
    """A ``CalibrationConfig`` from a config object, a dict or a YAML file path."""
    if isinstance(config, CalibrationConfig):
        if not overrides:
            return config
        raw = config.model_dump(by_alias=True, exclude_unset=True)
        return make_calibration_config(
            {**raw, **{k: v for k, v in overrides.items() if v is not None}}
        )
    if isinstance(config, str | Path):
        return load_calibration_config(config, **overrides)
    return make_calibration_config(
        {**config, **{k: v for k, v in overrides.items() if v is not None}}
    )


async def calibrate_async(
    config: CalibrationConfig | Mapping[str, Any] | str | Path,
    *,
    scorers: Sequence[Any] | None = None,
    store: Store | None = None,
    progress: bool | None = None,
    issue_certificates: bool = True,
    backend: Backend = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    **overrides: Any,
) -> CalibrationReport:
    """Calibrate the config's scorer(s) (or ``scorers``: ``Scorer`` objects or configs,
    which replace the config's ``scorer``) against its labelled data; see the module
    docstring. ``overrides`` are config keys (``min={"kappa": 0.6}``, ``gate_on="point"``).
    ``backend``/``ray_address``/``workers``: what executes each scorer's run, as for
    ``run_stored`` (``"ray"``: Ray workers over the store; docs/scale-out.md).
    """
    scale_out = RunOptions(backend=backend, ray_address=ray_address, workers=workers)
    from assay.operations.stored_runs import run_dataset_async, run_stored_async

    # before the judge runs: its statistics need scipy (a missing extra after paid judge
    # calls would waste them)
    require_extra("calibration", "judge calibration")
    if scorers is not None:
        overrides = {**overrides, "scorer": "custom"}
    cfg = as_calibration_config(config, **overrides)
    check_gate_names(cfg)
    built = build_scorers(scorers if scorers is not None else cfg.scorer_configs)
    if not built:
        raise CalibrationConfigError("key 'scorer': no scorer to calibrate")
    threshold = threshold_of(cfg)
    with using_store(store) as db:
        if cfg.dataset is not None:
            found = db.datasets.get(cfg.dataset)
            pinned = found.version if cfg.version is None else cfg.version
            items: list[Item] = list(db.datasets.items(found.id, pinned))
            data_key = dataset_data_key(found.name, pinned)
        elif cfg.annotations is not None:
            from assay.operations.annotations import human_labels

            try:
                annotated_run = db.runs.get(cfg.annotations).info.id
            except StoreError as error:
                raise CalibrationConfigError(f"key 'annotations': {error}") from error
            items = human_labels(annotated_run, store=db)
            if not items:
                raise CalibrationConfigError(
                    f"key 'annotations': run {cfg.annotations!r} has no annotation with a "
                    "label or a score"
                )
            data_key = f"annotations:{annotated_run}"
        else:
            assert cfg.data is not None
            from assay.runner.api import load_data

            items, _ = load_data(cfg.data)
            data_key = file_data_key(cfg.data)
        labelled = labelled_items(items, cfg)
        calibrations: list[ScorerCalibration] = []
        for scorer in built:
            options = RunOptions.of(
                scale_out,
                concurrency=cfg.concurrency,
                repeats=cfg.repeats,
                timeout_s=cfg.timeout,
                name=cfg.name or f"calibrate {scorer.label}",
                metadata={
                    "calibration": {
                        "kind": cfg.kind,
                        "label": cfg.label,
                        # how to read labels of other runs (judge-corrected means)
                        "label_map": cfg.label_map,
                        "label_range": cfg.label_range,
                        "data_key": data_key,
                        "scorer": scorer.id,
                        **_plot_inputs(labelled, scorer, cfg, threshold),
                    }
                },
                progress=progress,
            )
            target = ScorerTarget(scorer)
            if cfg.kind == "pairwise":
                run = await run_stored_async(
                    pairwise_run_items(labelled), target, [], store=db, options=options
                )
            elif cfg.annotations is not None:
                run = await run_stored_async(items, target, [], store=db, options=options)
            elif cfg.dataset is not None:
                run = await run_dataset_async(
                    cfg.dataset, target, [], version=pinned, store=db, options=options
                )
            else:
                assert cfg.data is not None
                run = await run_stored_async(cfg.data, target, [], store=db, options=options)
            results = list(db.runs.results(run.id))
            calibration = _calibrate_one(scorer, labelled, run.id, results, cfg)
            if issue_certificates:
                calibration.certificate = db.certificates.add(
                    _certificate(scorer, calibration, cfg, data_key)
                )
            calibrations.append(calibration)
    comparison = [_comparison(calibrations[0], other, cfg) for other in calibrations[1:]]
    return CalibrationReport(
        name=cfg.name,
        kind=cfg.kind,
        label=cfg.label,
        data_key=data_key,
        threshold=threshold,
        repeats=cfg.repeats,
        split=cfg.split.model_dump() if cfg.split is not None else None,
        gate_on=cfg.gate_on,
        items=len(labelled),
        scorers=calibrations,
        comparison=comparison,
    )


def _plot_inputs(
    labelled: list[LabelledItem], scorer: Scorer, config: CalibrationConfig, threshold: float | None
) -> dict[str, Any]:
    """What the calibration page needs besides the run's scores, kept in the run's metadata
    (results carry no item metadata, so the labels would otherwise be lost): each item's
    label on the scorer's scale and the verdict threshold. Pairwise labels are verdicts on
    pairs, not points on a scale, so they are not plotted."""
    if config.kind == "pairwise":
        return {}
    on_scale = _on_scorer_scale(np.array([e.label for e in labelled]), scorer, config)
    return {
        "threshold": threshold,
        "score_range": [v if math.isfinite(v) else None for v in scorer.score_range],
        "labels": {e.item.id: float(v) for e, v in zip(labelled, on_scale, strict=True)},
    }


def _certificate(
    scorer: Scorer, calibration: ScorerCalibration, config: CalibrationConfig, data_key: str
) -> Certificate:
    scorer_type, scorer_label = scorer_identity(scorer)
    held_out = calibration.splits.get("test", {})
    if config.split is not None and held_out.get("statistics"):
        statistics, n = held_out["statistics"], int(held_out["n"])
    else:
        statistics, n = calibration.statistics, calibration.n
    return Certificate(
        fingerprint=scorer.fingerprint,
        fingerprint_parts=certificate_parts(scorer),
        scorer_type=scorer_type,
        scorer_label=scorer_label,
        judge_model=calibration.judge_model,
        data_key=data_key,
        run_id=calibration.run_id,
        kind=config.kind,
        n=n,
        statistics=statistics,
        gates=[g.model_dump() for g in calibration.gates],
        # a certificate without gates certifies nothing: it is stored as not passed and
        # ``calibration_status`` reads it as "no gates"
        passed=bool(calibration.gates) and calibration.passed,
    )


def calibrate(
    config: CalibrationConfig | Mapping[str, Any] | str | Path,
    **options: Any,
) -> CalibrationReport:
    """``calibrate_async`` for synchronous code."""
    return run_sync(lambda: calibrate_async(config, **options))
