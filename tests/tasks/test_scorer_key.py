"""A task's ``scorer:`` key (issue 28): an assay scorer from the registry, with its params,
scored on each pipeline's filtered response; a pipeline's own ``scorer:`` wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.tasks import load_task, run_task
from assay.tasks.errors import TaskConfigError
from assay.tasks.yaml_loader import load_task_config

TASK = """task: t
dataset_path: x
output_type: generate_until
doc_to_text: "{{q}}"
doc_to_target: "{{a}}"
metric_list:
  - metric: exact_match
"""
PIPELINES = """filter_list:
  - name: raw
    filter:
      - function: take_first
  - name: number
    filter:
      - function: regex
        regex_pattern: "(\\\\d+)"
      - function: take_first
"""
DOCS = [{"q": "2+2?", "a": "4"}, {"q": "3+3?", "a": "6"}]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return path


def test_a_task_scorer_runs_on_every_pipeline_and_a_pipeline_scorer_wins(
    tmp_path: Path,
) -> None:
    text = TASK + "scorer:\n  type: check-includes\n  params: {expected: '4'}\n" + PIPELINES
    text += "    scorer: {type: exact-match, kwargs: {ignoreCase: true}}\n"  # on "number"
    task = load_task(write(tmp_path, text), docs=DOCS)
    outcome = run_task(
        task, predictions={0: "It is 4", 1: "the answer: 6"}, stored=False, progress=False
    )
    scores = {(r.item_id, k): s.score for r in outcome.run.results for k, s in r.scores.items()}
    assert scores[("0", "check-includes,raw")] == 1.0  # "It is 4" includes "4"
    assert scores[("1", "check-includes,raw")] == 0.0
    assert ("0", "check-includes,number") not in scores  # the pipeline's own scorer instead
    assert scores[("0", "exact-match,number")] == 1.0  # "4" == "4"
    assert scores[("1", "exact-match,number")] == 1.0
    assert outcome.report["aggregate"]["exact_match,number"] == 1.0
    assert outcome.report["aggregate"]["check-includes,raw"] == pytest.approx(0.5)


def test_a_scorer_given_by_name(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, TASK + "scorer: exact-match\n"), docs=DOCS)
    outcome = run_task(task, predictions={0: "4", 1: "5"}, stored=False, progress=False)
    assert outcome.report["aggregate"]["exact-match,none"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (TASK + "scorer: exact-mach\n", "scorer.type", "unknown scorer 'exact-mach'"),
        (TASK + "scorer: {type: exact-match, parms: {}}\n", "scorer.parms", "unknown key"),
        (
            TASK + "scorer: {type: exact-match, params: {}, kwargs: {}}\n",
            "scorer",
            "not both",
        ),
        (
            TASK + PIPELINES + "    scorer: nope\n",
            "filter_list[1].scorer.type",
            "unknown scorer 'nope'",
        ),
    ],
)
def test_bad_scorers_name_the_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    with pytest.raises(TaskConfigError) as caught:
        load_task_config(write(tmp_path, text))
    assert any(i.key == key and message in i.message for i in caught.value.issues), [
        (i.key, i.message) for i in caught.value.issues
    ]
