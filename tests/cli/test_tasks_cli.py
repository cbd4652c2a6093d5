"""``assay tasks validate|list|run`` as users run them: real subprocesses, a real SQLite file.

The ``--docs/--predictions --json`` path is a contract: its OUT file holds ``per_doc`` and
``aggregate`` in the shape of lm-eval's ``lmeval_config_compat.json``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_store_commands import assay
from tests.tasks.yaml_tree import TASK_FILES, build_tree, compat_cases

CASES = {case["label"]: case for case in compat_cases()}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("lm_eval_tasks"))


def write_case(tmp_path: Path, case: dict[str, Any]) -> tuple[Path, Path]:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in case["docs"]), encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"doc_id": i, "responses": r}) + "\n"
            for i, r in enumerate(case["responses"])
        ),
        encoding="utf-8",
    )
    return docs, preds


@pytest.mark.parametrize("label", ["gsm8k", "wmt16-en-de", "arc_easy"])
def test_tasks_run_on_predictions_writes_lm_evals_shape(
    tree: Path, tmp_path: Path, label: str
) -> None:
    case = CASES[label]
    docs, preds = write_case(tmp_path, case)
    out = tmp_path / "out.json"
    db = tmp_path / "a.db"
    run = assay(
        db,
        "tasks",
        "run",
        str(tree / TASK_FILES[case["yaml"]]),
        "--docs",
        str(docs),
        "--predictions",
        str(preds),
        "--json",
        str(out),
        "--bootstrap-iters",
        "100",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    assert [(r["doc"], r["filter"], r["filtered"]) for r in report["per_doc"]] == [
        (r["doc"], r["filter"], r["filtered"]) for r in case["per_doc"]
    ]
    for key, value in case["aggregate"].items():
        assert math.isclose(report["aggregate"][key], value, rel_tol=1e-9), key
    # the run is stored like any other: runs list shows it
    listed = assay(db, "runs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert any(r["info"]["name"] == f"task {case['yaml']}" for r in json.loads(listed.stdout))


def test_tasks_run_rejects_predictions_of_the_wrong_shape(tree: Path, tmp_path: Path) -> None:
    case = CASES["arc_easy"]
    docs, preds = write_case(tmp_path, case)
    preds.write_text(json.dumps({"doc_id": 0, "responses": "B"}) + "\n", encoding="utf-8")
    run = assay(
        tmp_path / "a.db",
        "tasks",
        "run",
        str(tree / TASK_FILES["arc_easy"]),
        "--docs",
        str(docs),
        "--predictions",
        str(preds),
    )
    assert run.returncode == 2
    assert "doc_id 0" in run.stderr and "multiple_choice" in run.stderr


def test_tasks_validate_names_the_file_and_key(tree: Path, tmp_path: Path) -> None:
    good = assay(tmp_path / "a.db", "tasks", "validate", str(tree / TASK_FILES["gsm8k"]), "--json")
    assert good.returncode == 0, good.stderr
    summary = json.loads(good.stdout)
    assert summary["valid"] and summary["filters"] == ["strict-match", "flexible-extract"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "task: t\ndataset_path: x.jsonl\ndoc_to_text: q\ndoc_to_target: a\n"
        "filter_list:\n  - name: f\n    filter:\n      - function: regexx\n",
        encoding="utf-8",
    )
    out = assay(tmp_path / "a.db", "tasks", "validate", str(bad))
    assert out.returncode == 2
    assert "bad.yaml" in out.stderr and "filter_list[0].filter[0]" in out.stderr
    assert "regex" in out.stderr  # the suggestion


def test_tasks_list_shows_tasks_and_broken_files(tree: Path, tmp_path: Path) -> None:
    out = assay(tmp_path / "a.db", "tasks", "list", str(tree), "--json")
    assert out.returncode == 0, out.stderr
    names = {row["name"] for row in json.loads(out.stdout)}
    assert {"gsm8k", "arc_easy", "wmt16-en-de", "lambada_openai"} <= names
    (tree / "broken.yaml").write_text("task: [\n", encoding="utf-8")
    try:
        broken = assay(tmp_path / "a.db", "tasks", "list", str(tree), "--json")
    finally:
        (tree / "broken.yaml").unlink()
    assert broken.returncode == 1
    rows = json.loads(broken.stdout)
    assert any(r["error"] and r["file"].endswith("broken.yaml") for r in rows)


def test_chat_options_are_checked_and_sent(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text(
        "task: t\ndataset_path: x\noutput_type: generate_until\n"
        "doc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"
    )
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"q": "2+2?", "a": "4"}\n')
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"doc_id": 0, "responses": "4"}\n')
    db = tmp_path / "a.db"
    common = ("tasks", "run", str(task), "--docs", str(docs), "--predictions", str(preds))
    refused = assay(db, *common, "--fewshot-as-multiturn")
    assert refused.returncode == 2
    assert "needs apply_chat_template" in refused.stderr
    out = tmp_path / "out.json"
    ran = assay(
        db,
        *common,
        "--apply-chat-template",
        "--system-instruction",
        "Be brief.",
        "--no-store",
        "--json",
        str(out),
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(out.read_text())["aggregate"]["exact_match,none"] == 1.0
