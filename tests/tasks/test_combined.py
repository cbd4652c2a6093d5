"""``ensemble`` and ``filter_agreement`` in a real task (gsm8k's two pipelines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.tasks import load_task, run_task
from assay.scoring.registry import create_scorer
from assay.tasks.combined import CombinedMetricError
from assay.tasks.task_scorers import task_scorers
from tests.tasks.yaml_tree import build_tree, compat_cases

GSM8K = next(c for c in compat_cases() if c["label"] == "gsm8k")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("lm_eval_tasks"))


def child(tree: Path, name: str, metric_list: str) -> Path:
    path = tree / "gsm8k" / name
    path.write_text(f"include: gsm8k.yaml\ntask: gsm8k\nmetric_list:\n{metric_list}", "utf-8")
    return path


def test_ensemble_and_filter_agreement(tree: Path) -> None:
    yaml = child(
        tree,
        "combined.yaml",
        "  - metric: ensemble\n    members:\n"
        "      - {metric: exact_match, weight: 2, ignore_case: true,"
        " regexes_to_ignore: [',', '\\\\$', '(?s).*#### ', '\\\\.$']}\n"
        "      - {metric: content-similarity, weight: 1}\n"
        "  - metric: filter_agreement\n    filters: [strict-match, flexible-extract]\n",
    )
    task = load_task(yaml, docs=GSM8K["docs"])
    outcome = run_task(
        task, predictions=dict(enumerate(GSM8K["responses"])), stored=False, progress=False
    )
    scores = {(r.item_id, key): s for r in outcome.run.results for key, s in r.scores.items()}
    similarity = create_scorer("content-similarity")
    references = [task.generation_reference(d) for d in GSM8K["docs"]]
    for doc, row in enumerate(GSM8K["per_doc"][:3]):  # strict-match rows
        exact = row["metrics"]["exact_match"]
        sim = similarity.run_sync(output=row["filtered"], ground_truth=references[doc]).score
        assert sim is not None
        ensemble = scores[(str(doc), "ensemble,strict-match")]
        assert ensemble.score == pytest.approx((2 * exact + sim) / 3)
        assert ensemble.values == pytest.approx({"exact_match": exact, "content-similarity": sim})
    agreement = [
        scores[(str(d), "filter_agreement,strict-match+flexible-extract")].score for d in range(3)
    ]
    assert agreement == [1.0, 0.0, 0.0]  # "72"/"72", "[invalid]"/"$1,000.", "[invalid]"/"70"


def test_bad_combinations_are_refused_with_the_key(tree: Path) -> None:
    unbounded = child(
        tree,
        "unbounded.yaml",
        "  - metric: ensemble\n    members:\n      - {metric: perplexity}\n",
    )
    with pytest.raises(CombinedMetricError, match=r"members\[0\].*perplexity.*bounded"):
        task_scorers(load_task(unbounded, docs=GSM8K["docs"]))
    unknown = child(
        tree,
        "unknown.yaml",
        "  - metric: filter_agreement\n    filters: [strict-match, nope]\n",
    )
    with pytest.raises(CombinedMetricError, match="'nope'"):
        task_scorers(load_task(unknown, docs=GSM8K["docs"]))
    weights = child(
        tree,
        "weights.yaml",
        "  - metric: ensemble\n    members:\n      - {metric: exact_match, weight: 0}\n",
    )
    with pytest.raises(CombinedMetricError, match=r"weight: must be a positive number"):
        task_scorers(load_task(weights, docs=GSM8K["docs"]))


def test_filter_diversity_grades_disagreement_across_pipelines(tree: Path) -> None:
    path = tree / "gsm8k" / "diversity.yaml"
    path.write_text(
        "include: gsm8k.yaml\ntask: gsm8k\n"
        "filter_list:\n"
        "  - name: strict-match\n    filter:\n"
        "      - {function: regex, regex_pattern: '#### (\\-?[0-9\\.\\,]+)'}\n"
        "      - {function: take_first}\n"
        "  - name: flexible-extract\n    filter:\n"
        "      - {function: regex, group_select: -1,"
        " regex_pattern: '(-?[$0-9.,]{2,})|(-?[0-9]+)'}\n"
        "      - {function: take_first}\n"
        "  - name: raw\n    filter:\n      - {function: take_first}\n"
        "metric_list:\n"
        "  - metric: exact_match\n"
        "  - metric: filter_diversity\n    filters: [strict-match, flexible-extract, raw]\n"
        "  - metric: filter_agreement\n    filters: [strict-match, flexible-extract]\n",
        "utf-8",
    )
    task = load_task(path, docs=GSM8K["docs"])
    outcome = run_task(
        task, predictions=dict(enumerate(GSM8K["responses"])), stored=False, progress=False
    )
    key = "filter_diversity,strict-match+flexible-extract+raw"
    scores = {(r.item_id, k): s for r in outcome.run.results for k, s in r.scores.items()}
    # "72"/"72"/full text: 2 of 3 distinct; the others: all three differ
    assert [scores[(str(d), key)].score for d in range(3)] == [0.5, 1.0, 1.0]
    assert outcome.report["aggregate"][key] == pytest.approx(2.5 / 3)
    agreement = "filter_agreement,strict-match+flexible-extract"
    assert outcome.report["aggregate"][agreement] == pytest.approx(1 / 3)
    assert sum(1 for s in task_scorers(task) if s.id == key) == 1  # once per set
