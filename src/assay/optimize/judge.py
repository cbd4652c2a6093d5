"""``optimize_judge``: a judge's own prompt as the GEPA candidate, its agreement with human
labels as the objective, ending in a certificate when the held-out statistics pass.

The loop calibration describes, closed: the candidate is the judge scorer's overridable
text (``instructions`` and its step templates, each a named component); the data is a
labelled set read with a calibration config's keys; GEPA maximises a calibration statistic
on minibatches with each item's disagreement (label, verdict, the judge's reason) as its
reflective feedback (``judge_evaluator``). The search, budgets, stored candidates and
evaluations, and resume are ``assay optimize``'s own (``optimizer``), not a copy.

Overfitting is guarded three ways: the items are split into train, val and test by item id
(disjoint, seeded, independent of file order); GEPA selects on val only; the winner and
the seed are then both judged on test and compared with every calibration statistic and
its CI, plus the paired bootstrap difference on the same items. Only when the user's
gates (``min``) pass on test is a certificate issued, for the winner's fingerprint (a
changed prompt is a changed fingerprint, so the seed's certificates do not carry over).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, Field

from assay.calibration.certificates import certificate_parts, judge_model_of, scorer_identity
from assay.calibration.config import (
    CalibrationConfig,
    CalibrationConfigError,
    make_calibration_config,
)
from assay.calibration.data import (
    CalibrationDataError,
    dataset_data_key,
    file_data_key,
    labelled_items,
    split_test_ids,
)
from assay.calibration.gates import DEFAULT_THRESHOLD, GateResult, check_gate_names, check_gates
from assay.calibration.measures import paired_differences_json, statistics_json
from assay.calibration.run import _on_scorer_scale
from assay.extras import require_extra
from assay.models.base import Model
from assay.optimize.candidate_target import candidate_hash
from assay.optimize.config import OptimizeConfigError
from assay.optimize.events import EventHandler
from assay.optimize.judge_config import (
    JudgeOptimizeConfig,
    load_judge_optimize_config,
    make_judge_optimize_config,
)
from assay.optimize.judge_evaluator import (
    JudgeEvaluator,
    JudgeRow,
    build_judge,
    judge_config_for,
)
from assay.optimize.optimizer import (
    PREPARERS,
    StartedOptimization,
    _Prepared,
    given_model,
    model_for,
    resume_stored,
    start_and_run,
    store_optimization,
)
from assay.optimize.outcome import Searched, announce_test, complete_with
from assay.optimize.results import HeldOutCheck, HeldOutVerdict, OptimizeResult
from assay.optimize.session import Evaluation, Session
from assay.optimize.splits import Example, Splits, file_sha256
from assay.runner.options import Backend, RunOptions
from assay.scorers._lib.judge_scorer import COMPUTED_PROMPT
from assay.scoring.registry import (
    ScorerConfig,
    ScorerRegistryError,
    create_scorer,
    get_scorer_type,
)
from assay.scoring.sync import run_sync
from assay.store import Certificate, Store, StoreError
from assay.store.optimizations_repo import OptimizationRecord
from assay.types import Item

KIND = "judge"
"""The ``optimizes`` key of a judge optimization's stored config."""


class SplitStatistics(BaseModel):
    """The seed's and the winner's calibration statistics on one split (same items)."""

    split: str
    n: int
    """Items both judged (an item either judge failed on is left out and counted)."""
    errors: int
    seed: dict[str, Any]
    """``statistics_json``: ``{"statistics": {name: {value, ci_low, ci_high, n}},
    "confusion_matrix": ...}``."""
    best: dict[str, Any]
    seed_run_id: str | None = None
    best_run_id: str | None = None


class JudgeOptimizeResult(OptimizeResult):
    """The outcome of ``optimize_judge`` (also the stored result; a superset of
    ``OptimizeResult``, so the optimization pages show it like any other)."""

    kind: str
    objective: str
    threshold: float | None
    scorer: dict[str, Any]
    """The seed judge's scorer config."""
    best_scorer: dict[str, Any]
    """The winner as a scorer config (``--write-best`` writes it; ``assay run -s`` takes
    it)."""
    seed_fingerprint: str
    best_fingerprint: str
    split_sizes: dict[str, int]
    val: SplitStatistics | None = None
    held_out: SplitStatistics | None = None
    difference: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Winner minus seed on the test split, per statistic, with a paired bootstrap CI."""
    gates: list[GateResult] = Field(default_factory=list)
    passed: bool = False
    """True when there were gates and every one passed on the test split."""
    certificate_id: str | None = None


# ---------------------------------------------------------------------- preparing
def _base_scorer(cfg: JudgeOptimizeConfig) -> ScorerConfig:
    spec = {"type": cfg.scorer} if isinstance(cfg.scorer, str) else dict(cfg.scorer)
    try:
        base = ScorerConfig.model_validate(spec)
        scorer_type = get_scorer_type(base.type)
    except (ValueError, ScorerRegistryError) as exc:
        raise OptimizeConfigError(f"key 'scorer': {exc}", key="scorer") from exc
    if scorer_type.kind != "judge" or not scorer_type.prompts:
        raise OptimizeConfigError(
            f"key 'scorer': {base.type!r} is not a judge scorer with overridable prompts "
            "(see `assay scorers show TYPE`)",
            key="scorer",
        )
    try:
        create_scorer(base)
    except (ValueError, TypeError, ScorerRegistryError) as exc:
        raise OptimizeConfigError(f"key 'scorer': {exc}", key="scorer") from exc
    return base


def seed_candidate(base: ScorerConfig, components: list[str] | None) -> dict[str, str]:
    """The judge's current texts: its params' overrides, else the built-in defaults."""
    defaults = get_scorer_type(base.type).prompts
    templates = dict(base.params.get("templates") or {})
    current = {"instructions": base.params.get("instructions") or defaults["instructions"]}
    for name, text in defaults.items():
        if name != "instructions":
            current[name] = templates.get(name, text)
    wanted = components or [n for n, text in current.items() if text != COMPUTED_PROMPT]
    unknown = [n for n in wanted if n not in current]
    if unknown:
        raise OptimizeConfigError(
            f"key 'components': {base.type!r} has no text {unknown[0]!r} (it has: "
            f"{', '.join(current)})",
            key="components",
        )
    computed = [n for n in wanted if current[n] == COMPUTED_PROMPT]
    if computed:
        raise OptimizeConfigError(
            f"key 'components': {base.type!r} computes its {computed[0]!r} text from the "
            f"params; give a starting text as params.templates.{computed[0]}",
            key="components",
        )
    return {name: current[name] for name in wanted}


def _calibration(cfg: JudgeOptimizeConfig) -> CalibrationConfig:
    try:
        cal = make_calibration_config({**cfg.calibration_keys(), "min": cfg.gates})
        check_gate_names(cal)
    except CalibrationConfigError as exc:
        raise OptimizeConfigError(str(exc)) from exc
    return cal


def _load(cfg: JudgeOptimizeConfig, store: Store) -> tuple[list[Item], str]:
    """The labelled items and their data key (what the certificate names)."""
    try:
        if cfg.dataset is not None:
            found = store.datasets.get(cfg.dataset)
            version = found.version if cfg.version is None else cfg.version
            return list(store.datasets.items(found.id, version)), dataset_data_key(
                found.name, version
            )
        if cfg.annotations is not None:
            from assay.operations.annotations import human_labels

            run_id = store.runs.get(cfg.annotations).info.id
            return human_labels(run_id, store=store), f"annotations:{run_id}"
        assert cfg.data is not None
        if cfg.sha256 is not None and file_sha256(Path(cfg.data)) != cfg.sha256:
            raise ValueError(
                "the file changed since the optimization started (its SHA-256 differs): "
                "restore it, or start a new optimization"
            )
        from assay.runner.api import load_data

        items, _ = load_data(cfg.data)
        return items, file_data_key(cfg.data)
    except (OSError, ValueError, LookupError, StoreError) as exc:
        key = "dataset" if cfg.dataset else "annotations" if cfg.annotations else "data"
        raise OptimizeConfigError(f"key {key!r}: {exc}", key=key) from exc


def judge_splits(item_ids: list[str], cfg: JudgeOptimizeConfig) -> dict[str, set[str]]:
    """train / val / test item ids: disjoint by id, seeded, independent of file order."""
    if len(item_ids) < 6:
        raise OptimizeConfigError(
            f"key 'data': {len(item_ids)} labelled items; a judge optimization needs at least "
            "6 (2 each for train, val and test)",
            key="data",
        )
    seed = cfg.split.seed
    test = split_test_ids(item_ids, cfg.split.test, seed)
    rest = [i for i in item_ids if i not in test]
    val = split_test_ids(rest, cfg.split.val / (1.0 - cfg.split.test), seed + 1)
    train = {i for i in rest if i not in val}
    return {"train": train, "val": val, "test": test}


def _pin(cfg: JudgeOptimizeConfig, store: Store) -> JudgeOptimizeConfig:
    """``cfg`` with its data pinned (file → absolute path + SHA-256, dataset → version)."""
    updates: dict[str, Any] = {}
    if cfg.data is not None and cfg.sha256 is None:
        path = Path(cfg.data).resolve()
        updates["data"] = str(path)
        with contextlib.suppress(OSError):  # unreadable: ``_load`` reports it, naming the key
            updates["sha256"] = file_sha256(path)
    if cfg.dataset is not None and cfg.version is None:
        try:
            updates["version"] = store.datasets.get(cfg.dataset).version
        except (LookupError, StoreError) as exc:
            raise OptimizeConfigError(f"key 'dataset': {exc}", key="dataset") from exc
    if cfg.run_dir and not Path(cfg.run_dir).is_absolute():
        updates["run_dir"] = str(Path(cfg.run_dir).resolve())
    return cfg.model_copy(update=updates) if updates else cfg


def prepare_judge(
    cfg: JudgeOptimizeConfig,
    store: Store,
    judge_model: Model | None = None,
    reflection_model: Model | None = None,
) -> _Prepared:
    """Everything that can be wrong, checked before anything is stored or run: the scorer
    is a judge, the components exist, the labels read, the gates name statistics of the
    kind, the splits have items."""
    base = _base_scorer(cfg)
    if cfg.judge_model is not None and judge_model is None:
        raise OptimizeConfigError(
            f"key 'judge_model': the judge was the model object {cfg.judge_model!r}; pass it "
            "again (judge_model=...). In YAML, choose the judge with scorer.params.model",
            key="judge_model",
        )
    seed = seed_candidate(base, cfg.components)
    cal = _calibration(cfg)
    reflection = model_for(
        cfg.reflection_model, reflection_model, cfg.reflection_base_url, "reflection_model"
    )
    seed_judge = build_judge(base, seed, judge_model)
    items, data_key = _load(cfg, store)
    try:
        labelled = labelled_items(items, cal)
        on_scale = _on_scorer_scale(np.array([e.label for e in labelled]), seed_judge, cal)
    except CalibrationDataError as exc:
        raise OptimizeConfigError(f"key 'label': {exc}", key="label") from exc
    ids = [e.item.id for e in labelled]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise OptimizeConfigError(
            f"key 'data': item id {twice!r} appears twice; the splits are by item id, so ids "
            "must be unique",
            key="data",
        )
    parts = judge_splits(ids, cfg)
    threshold = (
        (DEFAULT_THRESHOLD if cfg.threshold is None else cfg.threshold)
        if cfg.kind == "binary"
        else cfg.threshold
    )
    evaluator = JudgeEvaluator(
        base=base,
        judge_model=judge_model,
        kind=cfg.kind,
        threshold=threshold,
        objective=cfg.objective_name,
        labels={e.item.id: float(v) for e, v in zip(labelled, on_scale, strict=True)},
        raw_labels={e.item.id: e.raw_label for e in labelled},
        score_range=seed_judge.score_range,
    )
    by_split = {
        name: [Example(name, e.item) for e in labelled if e.item.id in members]
        for name, members in parts.items()
    }
    source = f"{data_key} (split by item id, seed {cfg.split.seed})"
    splits = Splits(
        train=by_split["train"],
        val=by_split["val"],
        test=by_split["test"],
        sources=dict.fromkeys(("train", "val", "test"), source),
    )
    conclude = functools.partial(_conclude, cfg=cfg, evaluator=evaluator, data_key=data_key)
    return _Prepared(cfg, reflection, evaluator, splits, seed, conclude)


def _prepare_stored(
    record: OptimizationRecord,
    store: Store,
    judge_model: Model | None,
    reflection_model: Model | None,
) -> _Prepared:
    raw = {k: v for k, v in record.config.items() if k != "optimizes"}
    cfg = make_judge_optimize_config(raw, source=f"optimization {record.id}")
    return prepare_judge(cfg, store, judge_model, reflection_model)


PREPARERS[KIND] = _prepare_stored


def create_judge_optimization(
    cfg: JudgeOptimizeConfig,
    store: Store,
    *,
    judge_model: Model | None = None,
    reflection_model: Model | None = None,
    optimization_id: str | None = None,
) -> StartedOptimization:
    """Check ``cfg`` and store the optimization (data pinned); nothing runs yet."""
    cfg = _pin(cfg, store)
    prepared = prepare_judge(cfg, store, judge_model, reflection_model)
    stored = cfg.model_dump(mode="json", by_alias=True, exclude_none=True)
    return store_optimization(
        prepared, {**stored, "optimizes": KIND}, cfg.run_dir, store, optimization_id
    )


# ---------------------------------------------------------------------- concluding
def _rows(evaluation: Evaluation) -> dict[str, JudgeRow]:
    return {r.item_id: r for r in evaluation.rows if isinstance(r, JudgeRow)}


def _judged(row: JudgeRow | None) -> Any:
    """What the statistics take of a row: its (original, swapped) verdicts for a pairwise
    judge, else its score; ``None`` when the judge failed on it."""
    if row is None or row.judge_score is None:
        return None
    return row.pair if row.pair is not None else row.judge_score


def _compare(
    session: Session,
    examples: list[Example],
    seed: dict[str, str],
    best: dict[str, str],
    cfg: JudgeOptimizeConfig,
    evaluator: JudgeEvaluator,
) -> tuple[SplitStatistics | None, dict[str, dict[str, Any]]]:
    """Seed and winner judged on ``examples`` (stored runs; a validation run GEPA already
    made is read back, not paid for twice), their statistics, and the paired difference."""
    if not examples:
        return None, {}
    seed_eval = session.run(session.evaluate(examples, seed))
    session.emit(seed_eval.event)
    if candidate_hash(seed) == candidate_hash(best):
        best_eval = seed_eval
    else:
        best_eval = session.run(session.evaluate(examples, best))
        session.emit(best_eval.event)
    seed_rows, best_rows = _rows(seed_eval), _rows(best_eval)
    seed_scores = {i: _judged(r) for i, r in seed_rows.items()}
    best_scores = {i: _judged(r) for i, r in best_rows.items()}
    both = list(
        dict.fromkeys(
            e.item.id
            for e in examples
            if seed_scores.get(e.item.id) is not None and best_scores.get(e.item.id) is not None
        )
    )
    options: dict[str, Any] = {
        "threshold": evaluator.threshold,
        "n_resamples": cfg.resamples,
        "seed": cfg.seed,
    }
    numbers = [evaluator.labels[i] for i in both]
    labels, a = evaluator.statistic_inputs(numbers, [seed_scores[i] for i in both])
    _, b = evaluator.statistic_inputs(numbers, [best_scores[i] for i in both])
    if len(both) < 2:
        empty: dict[str, Any] = {"statistics": {}}
        stats = SplitStatistics(
            split=examples[0].split,
            n=len(both),
            errors=len(examples) - len(both),
            seed=empty,
            best=empty,
            seed_run_id=seed_eval.run_id,
            best_run_id=best_eval.run_id,
        )
        return stats, {}
    stats = SplitStatistics(
        split=examples[0].split,
        n=len(both),
        errors=len(examples) - len(both),
        seed=statistics_json(cfg.kind, labels, a, **options),
        best=statistics_json(cfg.kind, labels, b, **options),
        seed_run_id=seed_eval.run_id,
        best_run_id=best_eval.run_id,
    )
    difference = paired_differences_json(cfg.kind, labels, a, b, **options)
    return stats, difference


def _value(stats: SplitStatistics | None, side: str, name: str) -> float | None:
    if stats is None:
        return None
    entry = getattr(stats, side)["statistics"].get(name) or {}
    value = entry.get("value")
    return float(value) if value is not None else None


def _verdict(seed: dict[str, str], best: dict[str, str], diff: Mapping[str, Any]) -> HeldOutVerdict:
    if candidate_hash(seed) == candidate_hash(best):
        return "best_is_seed"
    low, high = diff.get("ci_low"), diff.get("ci_high")
    if low is None or high is None:
        return "insufficient_data"
    if low > 0:
        return "improved"
    if high < 0:
        return "regressed"
    return "not_significant"


def _conclude(
    session: Session,
    splits: Splits,
    searched: Searched,
    *,
    cfg: JudgeOptimizeConfig,
    evaluator: JudgeEvaluator,
    data_key: str,
) -> JudgeOptimizeResult:
    """Seed vs winner on val and test with every statistic and CI, the paired difference on
    test, the gates on the winner's test statistics, and a certificate when they pass."""
    seed, best = searched.seed, searched.best
    objective = cfg.objective_name
    val, _ = _compare(session, splits.val, seed, best, cfg, evaluator)
    test, difference = _compare(session, splits.test, seed, best, cfg, evaluator)
    diff = difference.get(objective, {})
    verdict = _verdict(seed, best, diff)
    check = HeldOutCheck(
        items=len(splits.test),
        seed_run_id=test.seed_run_id if test else None,
        best_run_id=test.best_run_id if test else None,
        seed_score=_value(test, "seed", objective),
        best_score=_value(test, "best", objective),
        delta=diff.get("value"),
        ci_low=diff.get("ci_low"),
        ci_high=diff.get("ci_high"),
        verdict=verdict,
        significant=verdict in ("improved", "regressed"),
    )
    announce_test(session, check)
    best_statistics = test.best["statistics"] if test else {}
    gates = check_gates(best_statistics, cfg.gates, cfg.gate_on) if cfg.gates else []
    passed = bool(gates) and all(g.passed for g in gates)
    best_judge = build_judge(evaluator.base, best, evaluator.judge_model)
    seed_judge = build_judge(evaluator.base, seed, evaluator.judge_model)
    certificate_id = None
    if passed and test is not None:
        scorer_type, scorer_label = scorer_identity(best_judge)
        certificate = session.store.certificates.add(
            Certificate(
                fingerprint=best_judge.fingerprint,
                fingerprint_parts=certificate_parts(best_judge),
                scorer_type=scorer_type,
                scorer_label=scorer_label,
                judge_model=judge_model_of(best_judge),
                data_key=f"{data_key} (held-out test split of optimization {session.id})",
                run_id=test.best_run_id,
                kind=cfg.kind,
                n=test.n,
                statistics=best_statistics,
                gates=[g.model_dump() for g in gates],
                passed=True,
            )
        )
        certificate_id = certificate.id
    return complete_with(
        JudgeOptimizeResult,
        session,
        searched,
        check,
        summarize_judge,
        kind=cfg.kind,
        objective=objective,
        threshold=evaluator.threshold,
        scorer=evaluator.base.model_dump(mode="json", exclude_defaults=True),
        best_scorer=judge_config_for(evaluator.base, best).model_dump(
            mode="json", exclude_defaults=True
        ),
        seed_fingerprint=seed_judge.fingerprint,
        best_fingerprint=best_judge.fingerprint,
        split_sizes={"train": len(splits.train), "val": len(splits.val), "test": len(splits.test)},
        val=val,
        held_out=test,
        difference=difference,
        gates=gates,
        passed=passed,
        certificate_id=certificate_id,
    )


def summarize_judge(result: JudgeOptimizeResult) -> str:
    """One sentence: the objective on val and test, seed → winner, and the certificate."""
    name = result.objective
    head = (
        f"{name} on val {result.seed_val_score:.3f} → {result.best_val_score:.3f} "
        f"(candidate {result.best_idx} of {result.candidates})"
    )
    test = result.test
    if test is None or test.seed_score is None or test.best_score is None:
        tail = f"; {name} undefined on the test split"
    else:
        tail = f"; on test {test.seed_score:.3f} → {test.best_score:.3f}"
        if test.ci_low is not None and test.ci_high is not None and test.delta is not None:
            tail += f", Δ {test.delta:+.3f} [95% CI {test.ci_low:+.3f}, {test.ci_high:+.3f}]"
    if result.certificate_id:
        cert = f"; gates passed, certificate {result.certificate_id[:12]}"
    elif result.gates:
        cert = "; gates not met, no certificate"
    else:
        cert = "; no gates given, no certificate"
    return head + tail + cert


# ---------------------------------------------------------------------- the calls
async def optimize_judge_async(
    config: JudgeOptimizeConfig | Mapping[str, Any] | str | Path | None = None,
    *,
    judge_model: Model | None = None,
    reflection_model: str | Model | None = None,
    on_event: EventHandler | None = None,
    store: Store | None = None,
    backend: Backend = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    **fields: Any,
) -> JudgeOptimizeResult:
    """Optimize a judge's prompt against human labels; see ``JudgeOptimizeConfig`` and the
    module docstring. ``config`` is a config object, a dict or a YAML path; ``fields`` are
    config keys (``min={"kappa": 0.6}``). ``judge_model`` (a ``Model`` object, e.g. a
    scripted one) replaces the judge's model; objects must be passed again to resume.
    ``backend``/``ray_address``/``workers``: what executes each evaluation run, as for
    ``run_stored`` (``"ray"``: Ray workers; docs/scale-out.md)."""
    scale_out = RunOptions(backend=backend, ray_address=ray_address, workers=workers)
    # the held-out check is a calibration: without its extra, one line before any judge call
    require_extra("calibration", "judge optimization")
    raw: dict[str, Any]
    if isinstance(config, str | Path):
        cfg = load_judge_optimize_config(config, **fields)
        raw = cfg.model_dump(by_alias=True, exclude_unset=True)
    elif isinstance(config, JudgeOptimizeConfig):
        raw = {**config.model_dump(by_alias=True, exclude_unset=True), **fields}
    else:
        raw = {**dict(config or {}), **fields}
    judge_model = given_model(raw, "judge_model", judge_model)
    reflection_obj = given_model(raw, "reflection_model", reflection_model)
    cfg = make_judge_optimize_config(raw)
    start = functools.partial(
        create_judge_optimization, cfg, judge_model=judge_model, reflection_model=reflection_obj
    )
    return judge_result(await start_and_run(start, store, on_event, scale_out))


async def resume_judge_optimization_async(
    ref: str,
    *,
    judge_model: Model | None = None,
    reflection_model: Model | None = None,
    on_event: EventHandler | None = None,
    store: Store | None = None,
    backend: Backend = "local",
    ray_address: str | None = None,
    workers: int | None = None,
) -> JudgeOptimizeResult:
    """Continue a killed, failed or interrupted judge optimization (id or unique prefix);
    model objects given to the first call must be given again."""
    scale_out = RunOptions(backend=backend, ray_address=ray_address, workers=workers)
    resumed = await resume_stored(ref, judge_model, reflection_model, on_event, store, scale_out)
    return judge_result(resumed)


def resume_judge_optimization(ref: str, **kwargs: Any) -> JudgeOptimizeResult:
    """``resume_judge_optimization_async`` for synchronous code."""
    return run_sync(lambda: resume_judge_optimization_async(ref, **kwargs))


def judge_result(result: BaseModel) -> JudgeOptimizeResult:
    if not isinstance(result, JudgeOptimizeResult):
        raise TypeError("this optimization is not a judge optimization")
    return result


def optimize_judge(
    config: JudgeOptimizeConfig | Mapping[str, Any] | str | Path | None = None, **kwargs: Any
) -> JudgeOptimizeResult:
    """``optimize_judge_async`` for synchronous code."""
    return run_sync(lambda: optimize_judge_async(config, **kwargs))


def write_best_scorer(result: JudgeOptimizeResult, path: str | Path) -> None:
    """Write the winner as a scorer config YAML (``assay run -s PATH`` takes it)."""
    text = yaml.safe_dump(result.best_scorer, sort_keys=False, allow_unicode=True, width=100)
    Path(path).write_text(text, encoding="utf-8")
