"""Text code scorers compare with the expected output when there is one (``compare_to``)."""

from __future__ import annotations

import pytest

import assay

TYPES = ["content-similarity", "keyword-coverage", "textual-difference", "completeness"]


@pytest.mark.parametrize("type_id", TYPES)
def test_an_exactly_right_answer_scores_one_by_default(type_id: str) -> None:
    scorer = assay.create_scorer(type_id)
    result = scorer.run_sync(
        input="What is the capital of France?",
        output="Paris is the capital of France.",
        ground_truth="Paris is the capital of France.",
    )
    assert result.status == "ready" and result.score == pytest.approx(1.0)


@pytest.mark.parametrize("type_id", TYPES)
def test_without_ground_truth_auto_compares_with_the_input_like_the_reference(
    type_id: str,
) -> None:
    auto = assay.create_scorer(type_id)
    forced = assay.create_scorer(type_id, compare_to="input")
    kwargs = {"input": "The quick brown fox", "output": "the quick brown dog jumps"}
    assert auto.run_sync(**kwargs).score == forced.run_sync(**kwargs).score


def test_compare_to_input_keeps_the_reference_comparison_with_ground_truth() -> None:
    scorer = assay.create_scorer("content-similarity", compare_to="input")
    result = scorer.run_sync(input="abc", output="xyz", ground_truth="xyz")
    assert result.score == pytest.approx(0.0)
