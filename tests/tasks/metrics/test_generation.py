"""Generation metrics: v0.5 exact_match per prediction, ROUGE against rouge-score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from assay.tasks.metrics import TASK_METRICS, aggregate_metrics, score_generation
from assay.tasks.metrics.generation import exact_match, normalize_for_match

STSB = Path(__file__).parents[2] / "fixtures" / "lmeval" / "stsb_test_sample.jsonl"


def test_normalisation_order() -> None:
    text = "Route 66, AB!"
    assert normalize_for_match(text) == text
    assert normalize_for_match(text, regexes_to_ignore=["R"], ignore_case=True) == "oute 66, ab!"
    assert normalize_for_match(text, ignore_punctuation=True, ignore_numbers=True) == "Route  AB"


def test_exact_match_shapes() -> None:
    assert exact_match("a", ["a", "b", "a"]) == {"exact_match": [1, 0, 1]}
    assert exact_match(["a", "b"], ["a", "a"]) == {"exact_match": [1, 0]}
    with pytest.raises(ValueError, match="3 references for 2 predictions"):
        exact_match(["a", "b", "c"], ["a", "b"])


def test_rouge_equals_rouge_score_on_stsb() -> None:
    rows = [json.loads(line) for line in STSB.read_text().splitlines()][:50]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    raw: dict[tuple[str, str], list[float]] = {}
    expected: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": []}
    for row in rows:
        scores = score_generation(row["sentence1"], [row["sentence2"]], [("rouge", {})])
        assert scores.sources == {"rouge1": "rouge", "rouge2": "rouge", "rougeL": "rouge"}
        direct = scorer.score(row["sentence1"], row["sentence2"])
        for key in expected:
            expected[key].append(direct[key].fmeasure)
            raw.setdefault((key, "none"), []).append(scores[key][0])
    for key, values in expected.items():
        assert raw[(key, "none")] == values
    out = aggregate_metrics(raw, {k: "mean" for k, _ in raw}, bootstrap_iters=0)
    assert out["rouge1,none"] == pytest.approx(sum(expected["rouge1"]) / 50, abs=1e-15)
    assert TASK_METRICS.get("rouge").aggregation == "mean"


def test_rouge_with_several_references_takes_the_best() -> None:
    out = score_generation(
        ["a totally different text", "the cat sat on the mat"],
        ["the cat sat on the mat"],
        [("rouge", {"rouge_types": ["rouge1"]})],
        multiple_targets=True,
    )
    assert out == {"rouge1": [1.0]}
