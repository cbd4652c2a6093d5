"""The support bot's evals as pytest tests (see the README, "In pytest").

    pytest examples/pytest -p assay_pytest --assay-summary summary.md

``-p assay_pytest`` is only needed where assay's entry point is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bot import answer
from judge import correctness

from assay.testing import AssayEval, assert_score, cases

DATA = Path(__file__).with_name("support.jsonl")


@pytest.mark.parametrize("case", cases(DATA))
def test_answer_is_correct(case):  # type: ignore[no-untyped-def]
    """One test per dataset item (`pytest -k refund-window` reruns one)."""
    assert_score(
        correctness,
        input=case.input,
        output=answer(case.input),
        expected_output=case.expected_output,
        min=1,
    )


def test_refund_answer_is_stable():  # type: ignore[no-untyped-def]
    """Three independent samples (the model cache is bypassed); every one must pass."""
    question = "How long do I have to return an item?"
    assert_score(
        correctness,
        input=question,
        output=answer(question),
        expected_output="30 days",
        min=1,
        repeats=3,
        require="all",
    )


def test_support_quality(assay_eval: AssayEval) -> None:
    """The whole dataset through the bot, gated like `assay run --fail-under`."""
    report = assay_eval(
        DATA,
        answer,
        [correctness, "content-similarity"],
        fail_under={"correctness": 0.8},
        max_errors=0,
    )
    assert report.record.summary is not None
