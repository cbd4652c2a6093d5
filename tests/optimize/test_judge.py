"""optimize_judge: a judge's prompt optimized against human labels, checked on held-out
items, certified only when the gates pass; resumable like any optimization."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.optimize.config import OptimizeConfigError
from assay.optimize.events import OptimizeEvent
from assay.optimize.judge import (
    JudgeOptimizeResult,
    judge_splits,
    optimize_judge,
    resume_judge_optimization,
    write_best_scorer,
)
from assay.optimize.judge_config import make_judge_optimize_config
from assay.scoring.registry import create_scorer
from assay.store import Store
from assay.testing import ScriptedModel
from tests.optimize.judge_mock import (
    CRITICISM_RULE,
    DISMISSIVE_RULE,
    judge_reply,
    labelled_rows,
    reflection_reply,
    useless_reflection,
    write_rows,
)


@pytest.fixture
def judge_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "toxicity vs people",
        "scorer": {"type": "toxicity", "params": {"reason": "template"}},
        "data": write_rows(tmp_path / "labelled.jsonl", labelled_rows()),
        "label": "label",
        "label_map": {"toxic": 1, "ok": 0},
        "kind": "binary",
        "threshold": 0.5,
        "objective": "kappa",
        "split": {"val": 0.25, "test": 0.25, "seed": 3},
        "budget": {"max_metric_calls": 400},
        "minibatch_size": 10,
        "reflection_model": "scripted/reflect",
        "resamples": 200,
        "run_dir": str(tmp_path / "gepa"),
    }


def _run(config: dict[str, Any], store: Store, reflect: Any = reflection_reply, **kw: Any) -> Any:
    return optimize_judge(
        config,
        judge_model=ScriptedModel(responder=judge_reply, name="judge"),
        reflection_model=ScriptedModel(responder=reflect, name="reflect"),
        store=store,
        **kw,
    )


def test_the_statistic_rises_on_val_and_test_and_the_gate_certifies_the_winner(
    judge_config: dict[str, Any], store: Store
) -> None:
    result = _run(judge_config, store, min={"kappa": 0.6})
    assert isinstance(result, JudgeOptimizeResult)
    assert result.objective == "kappa"
    assert result.seed_val_score < 0.5 and result.best_val_score == pytest.approx(1.0)
    held_out = result.held_out
    assert held_out is not None and held_out.n == 10
    seed_kappa = held_out.seed["statistics"]["kappa"]["value"]
    best_kappa = held_out.best["statistics"]["kappa"]
    assert seed_kappa < 0.5 < best_kappa["value"] and best_kappa["ci_low"] is not None
    assert result.difference["kappa"]["value"] == pytest.approx(best_kappa["value"] - seed_kappa)
    assert result.val is not None and result.val.best["statistics"]["kappa"]["value"] == 1.0
    assert result.test is not None and result.test.verdict == "improved"
    text = " ".join(result.best_candidate.values())
    assert DISMISSIVE_RULE in text and CRITICISM_RULE in text
    # the certificate is the winner's, bound to its fingerprint, on the held-out split
    assert result.passed and result.certificate_id is not None
    certificate = store.certificates.get(result.certificate_id)
    assert certificate.passed and certificate.fingerprint == result.best_fingerprint
    assert certificate.n == 10 and "held-out test split" in certificate.data_key
    assert result.best_fingerprint != result.seed_fingerprint
    matrix = held_out.best["confusion_matrix"]["matrix"]
    assert matrix[0][1] == 0 and matrix[1][0] == 0  # no false verdicts after
    assert held_out.seed["confusion_matrix"]["matrix"] != matrix
    assert "certificate" in result.summary


def test_a_gate_that_is_not_met_issues_no_certificate(
    judge_config: dict[str, Any], store: Store
) -> None:
    judge_config["budget"] = {"max_metric_calls": 80}
    result = _run(judge_config, store, reflect=useless_reflection, min={"kappa": 0.6})
    assert not result.passed and result.certificate_id is None
    assert [g.passed for g in result.gates] == [False]
    assert store.certificates.list() == []
    assert "gates not met, no certificate" in result.summary


@pytest.mark.parametrize(
    ("kind", "objective"),
    [("numeric", "spearman"), ("ordinal", "quadratic_weighted_kappa"), ("binary", "mcc")],
)
def test_other_objectives_rise_on_val_and_test_and_certify(
    judge_config: dict[str, Any], store: Store, kind: str, objective: str
) -> None:
    """Spearman (numeric labels), QWK (ordinal) and MCC drive the same search: the
    reflection model only acts on feedback that says the judge DISAGREES, so for numeric
    and ordinal kinds the feedback must say it too (and which way)."""
    config = {**judge_config, "kind": kind, "objective": objective}
    if kind != "binary":
        del config["threshold"]
    result = _run(config, store, min={objective: 0.6})
    assert result.objective == objective
    assert result.seed_val_score < 0.5 and result.best_val_score == pytest.approx(1.0)
    held_out = result.held_out
    assert held_out is not None
    seed_value = held_out.seed["statistics"][objective]["value"]
    best = held_out.best["statistics"][objective]
    assert seed_value < 0.5 < best["value"] and best["ci_low"] >= 0.6
    assert result.passed and result.certificate_id is not None
    assert store.certificates.get(result.certificate_id).fingerprint == result.best_fingerprint


def test_the_splits_are_disjoint_by_item_id_and_ignore_file_order(
    judge_config: dict[str, Any],
) -> None:
    cfg = make_judge_optimize_config(judge_config)
    ids = [r["id"] for r in labelled_rows()]
    parts = judge_splits(ids, cfg)
    assert parts == judge_splits(list(reversed(ids)), cfg)
    assert set().union(*parts.values()) == set(ids)
    assert sum(len(p) for p in parts.values()) == len(ids)
    assert (len(parts["val"]), len(parts["test"])) == (10, 10)


def test_the_best_scorer_yaml_builds_the_winning_judge(
    judge_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    result = _run(judge_config, store)
    path = tmp_path / "best.yaml"
    write_best_scorer(result, path)
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert spec["type"] == "toxicity"
    judge = create_scorer(spec).with_judge_model(ScriptedModel(responder=judge_reply, name="judge"))
    assert judge.fingerprint == result.best_fingerprint
    assert result.certificate_id is None  # no gates, no certificate


class Kill(BaseException):
    """Stands in for SIGKILL/Ctrl-C: not an ``Exception``, so nothing may swallow it."""


def test_resume_after_a_kill_gives_the_same_result(
    judge_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    config = {**judge_config, "stop_at_perfect": False, "budget": {"max_metric_calls": 90}}
    reference = _run({**config, "run_dir": str(tmp_path / "ref")}, store, min={"kappa": 0.6})

    seen = 0

    def kill_after_30_items(event: OptimizeEvent) -> None:
        nonlocal seen
        if event.kind == "evaluated":
            seen += event.items
            if seen > 30:
                raise Kill

    with pytest.raises(Kill):
        _run(config, store, on_event=kill_after_30_items, min={"kappa": 0.6})
    [killed] = [o for o in store.optimizations.list() if o.id != reference.optimization_id]
    assert killed.status == "interrupted"
    resumed = resume_judge_optimization(
        killed.id[:10],
        judge_model=ScriptedModel(responder=judge_reply, name="judge"),
        reflection_model=ScriptedModel(responder=reflection_reply, name="reflect"),
        store=store,
    )
    assert resumed.optimization_id == killed.id
    assert resumed.best_candidate == reference.best_candidate
    assert (resumed.candidates, resumed.metric_calls) == (
        reference.candidates,
        reference.metric_calls,
    )
    assert resumed.best_val_score == reference.best_val_score
    assert resumed.held_out is not None and reference.held_out is not None
    assert resumed.held_out.best == reference.held_out.best
    assert resumed.difference == reference.difference
    assert resumed.best_fingerprint == reference.best_fingerprint
    assert resumed.certificate_id is not None and resumed.certificate_id != reference.certificate_id
    assert store.optimizations.get(killed.id).status == "completed"
    # the judge was a Python object: a resume without it refuses instead of judging otherwise
    from assay.optimize.judge import prepare_judge
    from assay.optimize.judge_config import make_judge_optimize_config

    stored = dict(store.optimizations.get(killed.id).config)
    stored.pop("optimizes")
    with pytest.raises(OptimizeConfigError, match=r"key 'judge_model': .*pass it again"):
        prepare_judge(make_judge_optimize_config(stored), store, None, ScriptedModel())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scorer": "exact-match"}, "not a judge scorer"),
        ({"scorer": {"type": "toxicity", "params": {"reasn": "x"}}}, "param 'reasn'"),
        ({"objective": "mae"}, "cannot be maximised"),
        ({"min": {"kapa": 0.5}}, "no statistic 'kapa'"),
        ({"components": ["analyse"]}, "has no text 'analyse'"),
        ({"label_map": {"toxic": 1}}, "'ok', which key 'label_map' does not map"),
        ({"split": {"val": 0.5, "test": 0.5}}, "must leave items for 'train'"),
        ({"treshold": 0.5}, "did you mean 'threshold'"),
    ],
)
def test_bad_config_is_refused_before_anything_is_stored(
    judge_config: dict[str, Any], store: Store, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(OptimizeConfigError, match=message):
        _run({**judge_config, **change}, store)
    assert store.optimizations.list() == []


def test_duplicate_item_ids_are_refused(
    judge_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    rows = labelled_rows()
    rows.append(dict(rows[0]))
    judge_config["data"] = write_rows(tmp_path / "dup.jsonl", rows)
    with pytest.raises(OptimizeConfigError, match="duplicate id 'insult-0'"):
        _run(judge_config, store)


def test_a_stored_dataset_is_pinned_to_its_version(
    judge_config: dict[str, Any], store: Store
) -> None:
    rows = [
        {**{k: v for k, v in r.items() if k != "label"}, "metadata": {"label": r["label"]}}
        for r in labelled_rows()
    ]
    store.datasets.create("toxicity-labels")
    store.datasets.add_items("toxicity-labels", rows)
    config = {k: v for k, v in judge_config.items() if k != "data"}
    result = _run({**config, "dataset": "toxicity-labels"}, store, min={"kappa": 0.6})
    stored = store.optimizations.get(result.optimization_id).config
    assert (stored["dataset"], stored["version"], stored["optimizes"]) == (
        "toxicity-labels",
        1,
        "judge",
    )
    assert result.passed
    certificate = store.certificates.get(result.certificate_id or "")
    assert certificate.data_key.startswith("dataset:toxicity-labels@1")


def test_texts_equal_to_the_builtin_ones_are_no_override() -> None:
    from assay.optimize.judge import seed_candidate
    from assay.optimize.judge_evaluator import judge_config_for
    from assay.scoring.registry import ScorerConfig

    base = ScorerConfig(type="toxicity", params={"reason": "template"})
    seed = seed_candidate(base, None)
    assert set(seed) == {"instructions", "analyze"}
    assert judge_config_for(base, seed).params == {"reason": "template"}
    assert (
        create_scorer(judge_config_for(base, seed)).fingerprint == create_scorer(base).fingerprint
    )
    changed = judge_config_for(base, {**seed, "analyze": "Judge each opinion."})
    assert changed.params == {"reason": "template", "templates": {"analyze": "Judge each opinion."}}
    # an override the base had is dropped when the candidate returns to the built-in text
    overridden = ScorerConfig(type="toxicity", params={"instructions": "Be strict."})
    assert seed_candidate(overridden, None)["instructions"] == "Be strict."
    assert judge_config_for(overridden, seed).params == {}


def test_a_pairwise_judge_loses_its_position_bias_and_it_is_re_measured(
    store: Store, tmp_path: Path
) -> None:
    from typing import Literal

    from pydantic import BaseModel

    from assay.scorers._lib.judge_common import ScaledJudgeParams
    from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, View
    from assay.scoring.registry import register_scorer, unregister
    from tests.optimize.judge_mock import (
        POSITION_RULE,
        pair_rows,
        pairwise_reflection,
        pairwise_reply,
    )

    class Preference(BaseModel):
        preferred: Literal["first", "second", "tie"]
        reason: str

    @register_scorer("pair-test-judge", label="Pair judge", params=ScaledJudgeParams)
    class PairJudge(JudgeScorer[ScaledJudgeParams, None, Preference]):
        """1 when the first response is better, 0 the second, 0.5 a tie (test judge)."""

        instructions = "You compare two responses to the same question."
        analyze = Prompt(
            "Which response answers better?",
            Preference,
            inputs={
                "response A": lambda j: j.ctx.call.output[0],
                "response B": lambda j: j.ctx.call.output[1],
            },
        )

        def score(self, j: View[ScaledJudgeParams, None, Preference]) -> float:
            return {"first": 1.0, "second": 0.0, "tie": 0.5}[j.analysis.preferred]

        def reason(self, j: View[ScaledJudgeParams, None, Preference]) -> str:
            return j.analysis.reason

    try:
        result = optimize_judge(
            {
                "scorer": "pair-test-judge",
                "data": write_rows(tmp_path / "pairs.jsonl", pair_rows()),
                "label": "label",
                "label_map": {"A": 1, "B": 0, "tie": 0.5},
                "kind": "pairwise",
                "split": {"seed": 1},
                "budget": {"max_metric_calls": 200},
                "reflection_model": "scripted/reflect",
                "resamples": 200,
                "run_dir": str(tmp_path / "gepa"),
            },
            judge_model=ScriptedModel(responder=pairwise_reply),
            reflection_model=ScriptedModel(responder=pairwise_reflection),
            store=store,
            min={"agreement": 0.8},
        )
    finally:
        unregister("pair-test-judge")
    assert PairJudge.type_id == "pair-test-judge"
    assert result.objective == "agreement"
    assert POSITION_RULE in " ".join(result.best_candidate.values())
    held_out = result.held_out
    assert held_out is not None and held_out.n == 6
    seed, best = held_out.seed["statistics"], held_out.best["statistics"]
    assert seed["position_bias_rate"]["value"] == 1.0 and seed["agreement"]["value"] == 0.0
    assert best["position_bias_rate"]["value"] == 0.0 and best["agreement"]["value"] == 1.0
    assert result.difference["position_bias_rate"]["value"] == -1.0
    assert result.passed and result.certificate_id is not None


def test_annotations_from_the_web_review_are_the_labels(
    judge_config: dict[str, Any], store: Store
) -> None:
    from assay.operations.annotations import AnnotationInput, annotate
    from assay.operations.stored_runs import run_stored

    rows = labelled_rows()
    items = [{k: v for k, v in r.items() if k != "label"} for r in rows]
    run_id = run_stored(items, None, ["exact-match"], store=store, progress=False).info.id
    for row in rows:
        annotate(run_id, row["id"], AnnotationInput(author="ana", label=row["label"]), store=store)
    config = {k: v for k, v in judge_config.items() if k not in ("data", "label")}
    result = _run({**config, "annotations": run_id}, store, min={"kappa": 0.6})
    assert result.split_sizes == {"train": 20, "val": 10, "test": 10}
    assert result.passed and result.certificate_id is not None
    certificate = store.certificates.get(result.certificate_id)
    assert certificate.data_key.startswith(f"annotations:{run_id}")
