"""``assay.calibration.run``: calibration runs end to end on a real SQLite store."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel
from scipy import stats

from assay.calibration.config import CalibrationConfigError
from assay.calibration.data import CalibrationDataError
from assay.calibration.report import write_disagreements
from assay.calibration.run import calibrate
from assay.datasets.io import read_items
from assay.models.base import ChatMessage
from assay.scoring.scorer import Scorer
from assay.scoring.steps import JudgeConfig, judge_step
from assay.store import Store, open_store
from assay.testing import ScriptedModel


class Verdict(BaseModel):
    score: float
    reason: str


def judge_scorer(
    answer: Callable[[str], float],
    *,
    name: str = "judge",
    instructions: str = "You grade answers.",
    model: str | None = None,
) -> Scorer:
    """A judge scorer whose scripted model answers ``answer(output text)``."""

    def responder(messages: list[ChatMessage], schema: dict[str, Any] | None) -> dict[str, Any]:
        text = messages[-1].content
        output = re.search(r"ANSWER<<(.*)>>", text, re.S)
        assert output is not None
        return {"score": answer(output.group(1)), "reason": f"judged {output.group(1)!r}"}

    judge = JudgeConfig(
        model=ScriptedModel(responder=responder) if model is None else model,
        instructions=instructions,
    )
    scorer = (
        Scorer(name, judge=judge)
        .preprocess(judge_step(lambda ctx: f"Grade ANSWER<<{ctx.output_text}>>", Verdict))
        .score(lambda ctx: ctx.preprocess_result.score)
        .reason(lambda ctx: ctx.preprocess_result.reason)
    )
    if model is not None:  # a model string for fingerprints; answer with a scripted one
        scorer = scorer.with_judge_model(ScriptedModel(responder=responder, name=model))
    return scorer


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = open_store(f"sqlite:///{tmp_path / 'cal.db'}")
    yield opened  # type: ignore[misc]
    opened.close()


def binary_rows(n: int = 40) -> list[dict[str, Any]]:
    """Items whose output text carries the judge's score; humans say yes when the hidden
    truth is high. Agreement is high but not perfect (items 0, 7 disagree)."""
    rows = []
    for k in range(n):
        truth = k % 2 == 0
        score = 0.9 if truth else 0.1
        if k in (0, 7):
            score = 1.0 - score
        rows.append(
            {
                "id": f"i{k:02d}",
                "input": f"q{k}",
                "output": f"{score}",
                "metadata": {"human": "yes" if truth else "no"},
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def binary_config(data: Path, **extra: Any) -> dict[str, Any]:
    return {
        "data": str(data),
        "label": "human",
        "label_map": {"yes": 1, "no": 0},
        "kind": "binary",
        "threshold": 0.5,
        "resamples": 200,
        **extra,
    }


def test_binary_calibration_is_a_stored_run_with_every_statistic_and_its_ci(
    tmp_path: Path, store: Store
) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    judge = judge_scorer(float)
    report = calibrate(binary_config(data), scorers=[judge], store=store, progress=False)

    [cal] = report.scorers
    run = store.runs.get(cal.run_id)
    assert run.info.target.kind == "scorer" and run.status == "completed"
    assert run.info.id in {r.id for r in store.runs.list()}
    labels = np.array([1.0 if k % 2 == 0 else 0.0 for k in range(40)])
    verdicts = labels.copy()
    verdicts[[0, 7]] = 1 - verdicts[[0, 7]]
    # kappa as scikit-learn computes it, with a CI around it
    from sklearn.metrics import cohen_kappa_score

    kappa = cal.statistics["kappa"]
    assert kappa["value"] == pytest.approx(cohen_kappa_score(labels, verdicts), abs=1e-12)
    assert kappa["ci_low"] < kappa["value"] < kappa["ci_high"] and kappa["n"] == 40
    assert {"accuracy", "roc_auc", "mcc", "f1"} <= set(cal.statistics)
    assert cal.confusion_matrix == {
        "labels": [0, 1],
        "matrix": [[19, 1], [1, 19]],
        "threshold": 0.5,
    }
    assert cal.reliability is not None and cal.reliability["bins"]
    data_json = report.to_json()
    assert data_json["statistics"]["kappa"] == kappa  # top level: one lookup away
    assert "points" not in data_json["scorers"][0]
    # the most dangerous cells first, with the judge's reason
    worst = {row["item_id"]: row for row in cal.disagreements}
    assert set(worst) == {"i00", "i07"}
    assert worst["i07"]["direction"] == "scorer high, humans low"
    assert worst["i07"]["reason"] == "judged '0.9'" and worst["i07"]["label"] == "no"


def test_gates_judge_the_lower_ci_bound_by_default_and_the_estimate_on_point(
    tmp_path: Path, store: Store
) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    judge = judge_scorer(float)
    value = calibrate(binary_config(data), scorers=[judge], store=store, progress=False)
    kappa = value.scorers[0].statistics["kappa"]
    between = (kappa["ci_low"] + kappa["value"]) / 2  # above the CI's low end, below the point

    on_ci = calibrate(
        binary_config(data, min={"kappa": between}), scorers=[judge], store=store, progress=False
    )
    assert not on_ci.passed
    [gate] = on_ci.scorers[0].gates
    assert gate.on == "ci" and gate.observed == pytest.approx(kappa["ci_low"])
    on_point = calibrate(
        binary_config(data, min={"kappa": between}, gate_on="point"),
        scorers=[judge],
        store=store,
        progress=False,
    )
    assert on_point.passed and on_point.scorers[0].gates[0].observed == pytest.approx(
        kappa["value"]
    )


def test_split_reports_dev_and_test_and_gates_on_test(tmp_path: Path, store: Store) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    config = binary_config(data, split={"test": 0.25, "seed": 3}, min={"accuracy": 0.0})
    report = calibrate(config, scorers=[judge_scorer(float)], store=store, progress=False)
    cal = report.scorers[0]
    assert cal.splits["test"]["n"] == 10 and cal.splits["dev"]["n"] == 30
    test_ids = {p["item_id"] for p in cal.points if p["split"] == "test"}
    hidden = {"i00", "i07"} & test_ids
    expected_accuracy = (10 - len(hidden)) / 10
    assert cal.splits["test"]["statistics"]["accuracy"]["value"] == pytest.approx(expected_accuracy)
    assert cal.gates[0].observed == pytest.approx(
        cal.splits["test"]["statistics"]["accuracy"]["ci_low"]
    )
    # the certificate carries the held-out statistics
    assert cal.certificate is not None
    assert cal.certificate.statistics == cal.splits["test"]["statistics"]
    # the same seed gives the same split; another seed another one
    again = calibrate(config, scorers=[judge_scorer(float)], store=store, progress=False)
    assert {p["item_id"] for p in again.scorers[0].points if p["split"] == "test"} == test_ids
    other = calibrate(
        {**config, "split": {"test": 0.25, "seed": 4}},
        scorers=[judge_scorer(float)],
        store=store,
        progress=False,
    )
    assert {p["item_id"] for p in other.scorers[0].points if p["split"] == "test"} != test_ids


def test_repeats_give_self_consistency(tmp_path: Path, store: Store) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows(20))
    calls: dict[str, int] = {}

    def wobbly(text: str) -> float:  # every third answer about an item lands across 0.5
        calls[text] = calls.get(text, 0) + 1
        base = float(text)
        return 0.45 if calls[text] % 3 == 0 and base == 0.9 else base

    report = calibrate(
        binary_config(data, repeats=3), scorers=[judge_scorer(wobbly)], store=store, progress=False
    )
    consistency = report.scorers[0].self_consistency
    assert consistency is not None and consistency["repeats"] == 3 and consistency["n"] == 20
    spreads = [s for s in consistency["per_item_spread"] if s]
    assert spreads and max(spreads) == pytest.approx(0.45)
    flip_rate = consistency["statistics"]["flip_rate"]["value"]
    assert flip_rate == pytest.approx(len(spreads) / 20)
    assert "krippendorff_alpha_interval" in consistency["statistics"]


def test_numeric_labels_on_another_scale_need_label_range(tmp_path: Path, store: Store) -> None:
    rows = [
        {"id": f"n{k}", "input": "a", "output": f"{k / 10}", "metadata": {"sim": k / 2}}
        for k in range(11)
    ]
    data = write_jsonl(tmp_path / "n.jsonl", rows)
    config = {"data": str(data), "label": "metadata.sim", "kind": "numeric", "resamples": 200}
    with pytest.raises(CalibrationDataError, match="'label_range'"):
        calibrate(config, scorers=[judge_scorer(float)], store=store, progress=False)
    report = calibrate(
        {**config, "label_range": [0, 5]},
        scorers=[judge_scorer(float)],
        store=store,
        progress=False,
    )
    statistics = report.scorers[0].statistics
    assert statistics["mae"]["value"] == pytest.approx(0.0, abs=1e-12)
    assert statistics["spearman"]["value"] == pytest.approx(1.0)


def test_comparing_two_scorers_gives_paired_differences(tmp_path: Path, store: Store) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    good = judge_scorer(float, name="v1")
    worse = judge_scorer(lambda t: 1.0 - float(t) if t.startswith("0.1") else float(t), name="v2")
    report = calibrate(binary_config(data), scorers=[good, worse], store=store, progress=False)
    assert [s.scorer_id for s in report.scorers] == ["v1", "v2"]
    [cmp] = report.comparison
    assert cmp["baseline"] == "v1" and cmp["candidate"] == "v2" and cmp["n"] == 40
    accuracy = cmp["differences"]["accuracy"]
    a = report.scorers[0].statistics["accuracy"]["value"]
    b = report.scorers[1].statistics["accuracy"]["value"]
    assert accuracy["value"] == pytest.approx(b - a)
    assert accuracy["ci_high"] < 0  # v2 calls every negative positive: clearly worse


def test_pairwise_each_pair_is_judged_in_both_orders_and_flips_count_as_ties(
    tmp_path: Path, store: Store
) -> None:
    rows = [
        {
            "id": f"p{k}",
            "input": "which is better?",
            "output_1": "long good answer" if k % 2 == 0 else "bad",
            "output_2": "bad" if k % 2 == 0 else "long good answer",
            "label": 1 if k % 2 == 0 else 2,
        }
        for k in range(12)
    ]
    data = write_jsonl(tmp_path / "p.jsonl", rows)
    config = {
        "data": str(data),
        "label": "label",
        "label_map": {1: 1.0, 2: 0.0},
        "kind": "pairwise",
        "resamples": 200,
    }

    def pair_judge(prefer: Callable[[str, str], float], name: str) -> Scorer:
        def responder(messages: list[ChatMessage], schema: dict[str, Any] | None) -> dict[str, Any]:
            first, second = re.findall(r"<<(.*?)>>", messages[-1].content)
            return {"score": prefer(first, second), "reason": "compared"}

        return (
            Scorer(
                name,
                judge=JudgeConfig(
                    model=ScriptedModel(responder=responder), instructions="Compare."
                ),
            )
            .preprocess(
                judge_step(
                    lambda ctx: f"First <<{ctx.call.output[0]}>> second <<{ctx.call.output[1]}>>",
                    Verdict,
                )
            )
            .score(lambda ctx: ctx.preprocess_result.score)
        )

    biased = pair_judge(lambda first, second: 1.0, "always-first")
    fair = pair_judge(lambda first, second: 1.0 if len(first) > len(second) else 0.0, "fair")
    report = calibrate(config, scorers=[biased, fair], store=store, progress=False)
    by_id = {s.scorer_id: s for s in report.scorers}
    biased_cal, fair_cal = by_id["always-first"], by_id["fair"]
    assert biased_cal.position_bias is not None
    assert biased_cal.position_bias["flips"] == 12 and biased_cal.position_bias["pairs"] == 12
    assert biased_cal.statistics["position_bias_rate"]["value"] == 1.0
    assert biased_cal.statistics["tie_rate"]["value"] == 1.0
    assert biased_cal.statistics["agreement"]["value"] == 0.0  # every verdict became a tie
    assert fair_cal.statistics["agreement"]["value"] == 1.0
    assert fair_cal.statistics["position_bias_rate"]["value"] == 0.0
    # the run holds each pair twice: as given and swapped
    results = list(store.runs.results(biased_cal.run_id))
    assert len(results) == 24 and {r.item_id for r in results} >= {"p0", "p0::swapped"}
    assert report.comparison[0]["differences"]["agreement"]["value"] == pytest.approx(1.0)


def test_unscored_items_are_counted_not_averaged(tmp_path: Path, store: Store) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())

    def failing_responder(messages: list[ChatMessage], schema: dict[str, Any] | None) -> Any:
        output = re.search(r"ANSWER<<(.*)>>", messages[-1].content, re.S)
        assert output is not None
        if output.group(1) == "0.1":
            return "not json at all"
        return {"score": float(output.group(1)), "reason": "ok"}

    scorer = (
        Scorer(
            "flaky",
            judge=JudgeConfig(
                model=ScriptedModel(responder=failing_responder), instructions="Grade."
            ),
        )
        .preprocess(judge_step(lambda ctx: f"Grade ANSWER<<{ctx.output_text}>>", Verdict))
        .score(lambda ctx: ctx.preprocess_result.score)
    )
    report = calibrate(binary_config(data), scorers=[scorer], store=store, progress=False)
    cal = report.scorers[0]
    failed = sum(1 for r in binary_rows() if r["output"] == "0.1")
    assert len(cal.errors) == failed and cal.n == 40 - failed
    assert cal.statistics["accuracy"]["n"] == 40 - failed


def test_disagreements_export_is_a_dataset_file(tmp_path: Path, store: Store) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    report = calibrate(
        binary_config(data), scorers=[judge_scorer(float)], store=store, progress=False
    )
    out = tmp_path / "dis.jsonl"
    assert write_disagreements(report, out) == 2
    items = list(read_items(out))
    assert {i.id for i in items} == {"i00", "i07"}
    row = next(i for i in items if i.id == "i07")
    assert row.expected_output == "no" and row.metadata["score"] == 0.9
    assert row.metadata["reason"] == "judged '0.9'" and row.output == "0.9"


def test_a_stored_dataset_pins_its_version_in_the_certificate(tmp_path: Path, store: Store) -> None:
    from assay.operations.datasets import import_file

    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    import_file(store, data, dataset="labelled")
    config = binary_config(data)
    del config["data"]
    report = calibrate(
        {**config, "dataset": "labelled"},
        scorers=[judge_scorer(float)],
        store=store,
        progress=False,
    )
    cal = report.scorers[0]
    assert report.data_key == "dataset:labelled@1"
    assert cal.certificate is not None and cal.certificate.data_key == "dataset:labelled@1"
    run = store.runs.get(cal.run_id)
    assert run.info.dataset_name == "labelled" and run.info.dataset_version == 1


def test_annotations_of_a_stored_run_are_the_labels(store: Store) -> None:
    from assay.operations.annotations import AnnotationInput, annotate
    from assay.operations.stored_runs import run_stored

    rows = [
        {"id": f"a{k}", "input": f"q{k}", "output": str(0.9 if k % 2 else 0.1)} for k in range(8)
    ]
    reviewed = run_stored(rows, None, ["exact-match"], store=store, progress=False).info.id
    # six of the eight items get a label; a5 is overruled by a later reviewer, a6 only commented
    said = {"a0": "fail", "a1": "pass", "a2": "pass", "a3": "pass", "a4": "fail", "a5": "pass"}
    for item_id, label in said.items():
        annotate(reviewed, item_id, AnnotationInput(author="ana", label=label), store=store)
    annotate(reviewed, "a5", AnnotationInput(author="bo", label="fail"), store=store)
    annotate(reviewed, "a6", AnnotationInput(author="bo", comment="unsure"), store=store)

    report = calibrate(
        {
            "annotations": reviewed[:10],
            "label_map": {"pass": 1, "fail": 0},
            "kind": "binary",
            "threshold": 0.5,
            "resamples": 200,
        },
        scorers=[judge_scorer(float)],
        store=store,
        progress=False,
    )
    [cal] = report.scorers
    assert report.items == 6 and report.label == "metadata.human_label"
    assert report.data_key == f"annotations:{reviewed}"
    # verdicts (score >= 0.5 on odd items) against the labels: a2 and a5 disagree
    assert cal.statistics["accuracy"]["value"] == pytest.approx(4 / 6)
    assert {row["item_id"] for row in cal.disagreements} == {"a2", "a5"}
    assert cal.certificate is not None and cal.certificate.n == 6


def test_annotations_without_labels_are_refused_naming_the_key(store: Store) -> None:
    from assay.operations.stored_runs import run_stored

    rows = [{"id": "a0", "input": "q", "output": "0.5"}]
    reviewed = run_stored(rows, None, ["exact-match"], store=store, progress=False).info.id
    config = {"annotations": reviewed, "kind": "binary", "label_map": {"pass": 1, "fail": 0}}
    with pytest.raises(CalibrationConfigError, match="key 'annotations'"):
        calibrate(config, scorers=[judge_scorer(float)], store=store, progress=False)
    with pytest.raises(CalibrationConfigError, match=r"key 'annotations'.*no-such-run"):
        calibrate(
            {**config, "annotations": "no-such-run"},
            scorers=[judge_scorer(float)],
            store=store,
            progress=False,
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "graded"}, "key 'kind'"),
        ({"lable": "x"}, "unknown key 'lable'; did you mean 'label'"),
        ({"min": {"kappa": "high"}}, "key 'min.kappa'"),
        ({"min": {"mae": 0.1}}, "'mae' is lower-is-better"),
        ({"min": {"spearman": 0.1}}, "no statistic 'spearman' for kind 'binary'"),
        ({"split": {"test": 1.5}}, "key 'split.test'"),
        ({"repeats": 0}, "key 'repeats'"),
        ({"data": None}, "exactly one of 'data'"),
        ({"annotations": "run-id"}, "exactly one of 'data'"),
    ],
)
def test_config_errors_name_the_key(
    tmp_path: Path, store: Store, change: dict[str, Any], message: str
) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    config = {k: v for k, v in {**binary_config(data), **change}.items() if v is not None}
    with pytest.raises(CalibrationConfigError, match=re.escape(message)):
        calibrate(config, scorers=[judge_scorer(float)], store=store, progress=False)
    assert store.runs.list() == []  # refused before anything ran


def test_label_errors_name_the_item_and_the_key(tmp_path: Path, store: Store) -> None:
    rows = binary_rows()
    rows[3]["metadata"]["human"] = "maybe"
    data = write_jsonl(tmp_path / "b.jsonl", rows)
    with pytest.raises(CalibrationDataError, match=r"item 'i03'.*'maybe'.*'label_map'"):
        calibrate(binary_config(data), scorers=[judge_scorer(float)], store=store, progress=False)
    del rows[3]["metadata"]["human"]
    write_jsonl(data, rows)
    with pytest.raises(CalibrationDataError, match=r"item 'i03' has no label at key 'label'"):
        calibrate(binary_config(data), scorers=[judge_scorer(float)], store=store, progress=False)
    assert store.runs.list() == []


def test_spearman_matches_scipy_on_sts_b_sample(store: Store) -> None:
    example = Path(__file__).parents[2] / "examples" / "calibration" / "stsb.yaml"
    report = calibrate(example, store=store, progress=False, min={})
    cal = report.scorers[0]
    labels = [p["label"] for p in cal.points]
    scores = [p["score"] for p in cal.points]
    assert cal.n == 80
    rho = stats.spearmanr(labels, scores).statistic
    assert cal.statistics["spearman"]["value"] == pytest.approx(rho, abs=1e-9)


def test_a_point_gate_uses_a_value_whose_ci_is_undefined_and_a_ci_gate_refuses_it(
    tmp_path: Path, store: Store
) -> None:
    data = write_jsonl(tmp_path / "four.jsonl", binary_rows(4))
    outcomes = {}
    point = None
    for on in ("point", "ci"):
        report = calibrate(
            binary_config(data, min={"roc_auc": 0.5}, gate_on=on),
            scorers=[judge_scorer(float)],
            store=store,
            progress=False,
        )
        [gate] = report.scorers[0].gates
        outcomes[on] = gate
        auc = report.scorers[0].statistics["roc_auc"]
        assert auc["value"] is not None and auc["ci_low"] is None
        assert auc["reason"].startswith("no CI: undefined on ")
        point = auc["value"]
    assert outcomes["point"].passed == (point >= 0.5) and outcomes["point"].observed == point
    assert not outcomes["ci"].passed and "roc_auc has no CI: no CI: undefined" in (
        outcomes["ci"].reason
    )


def test_a_score_outside_the_declared_range_is_an_item_error_naming_the_item(
    tmp_path: Path, store: Store
) -> None:
    rows = binary_rows()
    rows[3]["output"] = "1.7"  # the judge answers 1.7 on a scorer declared 0..1
    data = write_jsonl(tmp_path / "b.jsonl", rows)
    report = calibrate(binary_config(data), scorers=[judge_scorer(float)], store=store)
    cal = report.scorers[0]
    assert cal.n == 39
    assert cal.errors == [
        {"item_id": "i03", "error": "score 1.7 is outside the scorer's declared range [0, 1]"}
    ]
    assert cal.statistics["ece"]["value"] is not None
