"""Task runs on recorded predictions reproduce lm-eval: the 10 compat configurations.

Each configuration of ``lmeval_config_compat.json`` (computed by lm-eval's own
``ConfigurableTask``) is loaded from its real YAML (includes and all), its docs replace the
dataset, its recorded responses are scored through the runner and a real SQLite store, and
the filtered outputs, per-doc metrics and aggregates must equal lm-eval's (floats to 1e-9).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from assay.operations.tasks import (
    TaskRunError,
    lmeval_results,
    load_task,
    read_predictions,
    run_task,
)
from assay.store import open_store
from tests.tasks.yaml_tree import TASK_FILES, build_tree, compat_cases

CASES = compat_cases()


def close(a: Any, b: Any) -> bool:
    """Equal, with floats compared to 1e-9 (relative) at any depth."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return bool(a == b)


def task_file(root: Path, case: dict[str, Any]) -> Path:
    """The case's YAML; polemo2's metrics need Hugging Face ``evaluate`` (network), so the
    compat case replaced them with ``bypass``: a child YAML that includes it does the same."""
    path = root / TASK_FILES[case["yaml"]]
    if "bypass" in case["label"]:
        child = path.with_name("polemo2_in_bypass.yaml")
        child.write_text(
            f"include: {path.name}\ntask: polemo2_in\nmetric_list:\n  - metric: bypass\n",
            encoding="utf-8",
        )
        return child
    return path


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("lm_eval_tasks"))


@pytest.mark.parametrize("case", CASES, ids=[c["label"].split("(")[0] for c in CASES])
def test_compat_case_reproduces_lm_eval(tree: Path, tmp_path: Path, case: dict[str, Any]) -> None:
    task = load_task(task_file(tree, case), docs=case["docs"])
    predictions = dict(enumerate(case["responses"]))
    with open_store(f"sqlite:///{tmp_path / 'tasks.db'}") as store:
        outcome = run_task(
            task, predictions=predictions, store=store, progress=False, bootstrap_iters=200
        )
        stored = list(store.runs.results(outcome.run.id))
    report = outcome.report
    assert report["errors"] == []
    expected = {(row["doc"], row["filter"]): row for row in case["per_doc"]}
    got = {(row["doc"], row["filter"]): row for row in report["per_doc"]}
    assert got.keys() == expected.keys()
    for key, row in expected.items():
        assert close(got[key]["filtered"], row["filtered"]), (key, got[key], row)
        assert close(got[key]["metrics"], row["metrics"]), (key, got[key], row)
    for key, value in case["aggregate"].items():
        assert key in report["aggregate"], key
        assert close(report["aggregate"][key], value), (key, report["aggregate"][key], value)
    # the stored run alone gives the same report (what `runs show` and reports build on)
    assert close(
        lmeval_results(task, stored, bootstrap_iters=200)["aggregate"], report["aggregate"]
    )


@pytest.mark.parametrize("case", CASES, ids=[c["label"].split("(")[0] for c in CASES])
def test_run_summary_carries_lm_eval_aggregates(tree: Path, case: dict[str, Any]) -> None:
    task = load_task(task_file(tree, case), docs=case["docs"])
    outcome = run_task(
        task,
        predictions=dict(enumerate(case["responses"])),
        stored=False,
        progress=False,
        bootstrap_iters=200,
    )
    summaries = outcome.run.summary.scorers
    for key, value in case["aggregate"].items():
        aggregates = summaries[key].aggregates
        corpus = [v for name, v in aggregates.items() if not name.startswith("lm-eval-stderr")]
        assert corpus and close(corpus[0], value), (key, aggregates, value)


def test_a_changed_response_changes_the_aggregate(tree: Path) -> None:
    case = next(c for c in CASES if c["label"] == "gsm8k")
    task = load_task(task_file(tree, case), docs=case["docs"])
    responses = dict(enumerate(case["responses"]))
    responses[2] = "The total is #### 5"
    report = run_task(
        task, predictions=responses, stored=False, progress=False, bootstrap_iters=0
    ).report
    assert report["aggregate"]["exact_match,strict-match"] == pytest.approx(2 / 3)


def test_predictions_with_the_wrong_shape_name_the_doc(tree: Path) -> None:
    case = next(c for c in CASES if c["label"] == "arc_easy")
    task = load_task(task_file(tree, case), docs=case["docs"])
    responses = dict(enumerate(case["responses"]))
    responses[1] = responses[1][:2]  # 2 pairs for 3 choices
    with pytest.raises(TaskRunError, match=r"doc_id 1.*3 choices"):
        run_task(task, predictions=responses, stored=False, progress=False)
    del responses[1]
    with pytest.raises(TaskRunError, match="no line for doc_id 1"):
        run_task(task, predictions=responses, stored=False, progress=False)


def test_read_predictions_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"doc_id": 0, "responses": "a"}\n{"doc_id": 0, "responses": "b"}\n')
    with pytest.raises(TaskRunError, match=r"preds.jsonl:2: doc_id 0 appears twice"):
        read_predictions(path)
    path.write_text('{"doc": 0}\n')
    with pytest.raises(TaskRunError, match=r"preds.jsonl:1: expected"):
        read_predictions(path)
    path.write_text(json.dumps({"doc_id": -1, "responses": "x"}) + "\n")
    with pytest.raises(TaskRunError, match="non-negative"):
        read_predictions(path)


def test_each_score_says_what_the_filters_extracted(tree: Path) -> None:
    case = next(c for c in CASES if c["label"] == "gsm8k")
    task = load_task(task_file(tree, case), docs=case["docs"])
    run = run_task(
        task, predictions=dict(enumerate(case["responses"])), stored=False, progress=False
    ).run
    first = next(r for r in run.results if r.item_id == "1")
    strict = first.scores["exact_match,strict-match"]
    assert strict.reason == "strict-match extracted '[invalid]' → exact_match 0"
    assert strict.steps["preprocess"] == ["[invalid]"]
    flexible = first.scores["exact_match,flexible-extract"]
    assert flexible.reason == "flexible-extract extracted '$1,000.' → exact_match 1"


def test_task_keys_in_a_group_file_override_its_children(tmp_path: Path) -> None:
    """lm-eval 0.4.13: a group file's task keys (here metric_list) apply to every child,
    over the child's own; a parent group's overrides win over a nested group's."""
    from assay.operations.tasks import group_leaves

    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(
            f"task: t_{name}\ndataset_path: d.jsonl\ndoc_to_text: q\ndoc_to_target: a\n"
            "metric_list:\n  - metric: exact_match\n",
            encoding="utf-8",
        )
    (tmp_path / "inner.yaml").write_text(
        "group: inner\ntask: [t_b]\nnum_fewshot: 3\nmetric_list:\n  - metric: bleu\n",
        encoding="utf-8",
    )
    outer = tmp_path / "outer.yaml"
    outer.write_text(
        "group: outer\ntask: [t_a, inner]\nmetric_list:\n  - metric: chrf\n", encoding="utf-8"
    )
    config, leaves = group_leaves(outer)
    assert config.task_overrides == {"metric_list": [{"metric": "chrf"}]}
    assert [e.name for e in leaves["t_a"].config.metric_entries()] == ["chrf"]
    assert [e.name for e in leaves["t_b"].config.metric_entries()] == ["chrf"]  # outer wins
    assert leaves["t_b"].config.num_fewshot == 3  # inner's own override still applies


def test_a_python_task_class_is_refused_by_name(tmp_path: Path) -> None:
    from assay.tasks.errors import TaskConfigError

    path = tmp_path / "py.yaml"
    path.write_text("task: py\nclass: !function mod.Task\n", encoding="utf-8")
    with pytest.raises(TaskConfigError, match=r"py.yaml: class: a Python task class"):
        load_task(path)


def test_a_task_run_on_ray_must_be_stored(tree: Path) -> None:
    """Refused before Ray is even looked for: the workers store the results."""
    case = CASES[0]
    task = load_task(task_file(tree, case), docs=case["docs"])
    predictions = dict(enumerate(case["responses"]))
    with pytest.raises(TaskRunError, match="its workers store the results"):
        run_task(task, predictions=predictions, stored=False, backend="ray", progress=False)


EXAMPLES = Path(__file__).parents[2] / "examples" / "tasks"


def test_run_task_file_scores_a_predictions_file_as_run_task_does(tmp_path: Path) -> None:
    """``run_task_file`` (what ``assay tasks run`` calls) reads the files itself and gets
    what the lower-level calls give; ``--docs`` replaces the task's dataset."""
    from assay.operations.tasks import TaskRun, run_task_file

    preds = EXAMPLES / "arith_predictions.jsonl"
    outcome = run_task_file(
        EXAMPLES / "arith.yaml", predictions=preds, stored=False, progress=False
    )
    direct = run_task(
        load_task(EXAMPLES / "arith.yaml"),
        predictions=read_predictions(preds),
        stored=False,
        progress=False,
    )
    assert isinstance(outcome, TaskRun)
    assert outcome.report["aggregate"] == direct.report["aggregate"]
    assert outcome.report["n_docs"] == 4  # every line of arith.jsonl

    docs = tmp_path / "two.jsonl"  # two docs only: doc 2's prediction has no doc
    docs.write_text(
        '{"question": "1+1?", "answer": "2"}\n{"question": "2+2?", "answer": "4"}\n',
        encoding="utf-8",
    )
    two = tmp_path / "two_preds.jsonl"
    two.write_text(
        '{"doc_id": 0, "responses": "#### 2"}\n{"doc_id": 1, "responses": "#### 5"}\n',
        encoding="utf-8",
    )
    replaced = run_task_file(
        EXAMPLES / "arith.yaml", predictions=two, docs=docs, stored=False, progress=False
    )
    assert isinstance(replaced, TaskRun)
    assert replaced.report["aggregate"]["exact_match,strict"] == 0.5


def test_run_task_file_refuses_what_the_file_cannot_take(tmp_path: Path) -> None:
    from assay.operations.tasks import run_task_file

    task = EXAMPLES / "arith.yaml"
    preds = EXAMPLES / "arith_predictions.jsonl"
    with pytest.raises(TaskRunError, match="exactly one"):
        run_task_file(task, stored=False)
    with pytest.raises(TaskRunError, match="exactly one"):
        run_task_file(task, model="openai/x", predictions=preds, stored=False)
    with pytest.raises(TaskRunError, match=r"missing\.jsonl: no such file"):
        run_task_file(task, predictions=tmp_path / "missing.jsonl", stored=False)
    group = tmp_path / "group.yaml"
    group.write_text("group: g\ntask: [arith]\n", encoding="utf-8")
    with pytest.raises(TaskRunError, match="--docs/--predictions are per task"):
        run_task_file(group, predictions=preds, stored=False)
    with pytest.raises(TaskRunError, match="--docs/--predictions are per task"):
        run_task_file(group, model="openai/x", docs=EXAMPLES / "arith.jsonl", stored=False)
