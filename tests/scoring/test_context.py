"""The pipeline's fast constructors build exactly what the dataclasses build."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from assay.scoring.context import ScorerCall, StepContext, scorer_call, step_context


def test_scorer_call_equals_the_dataclass_and_stays_frozen() -> None:
    values = {
        "output": ["a"],
        "input": {"q": 1},
        "ground_truth": "g",
        "context": ["c1", "c2"],
        "expected_trajectory": None,
        "call_id": "run-0-0-0",
        "metadata": {"k": "v"},
    }
    fast = scorer_call(**values)
    built = ScorerCall(**values)
    assert fast == built and repr(fast) == repr(built)
    assert {f.name: getattr(fast, f.name) for f in dataclasses.fields(ScorerCall)} == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.output = "x"  # type: ignore[misc]
    assert dataclasses.replace(fast, output="y") == dataclasses.replace(built, output="y")
    assert pickle.loads(pickle.dumps(fast)) == built


def test_step_context_equals_the_dataclass_and_stays_frozen() -> None:
    call = ScorerCall(output="o")
    results = {"preprocess": 1}
    fast = step_context(call, results, 0.5)  # type: ignore[arg-type]
    assert fast == StepContext(call, results, 0.5)  # type: ignore[arg-type]
    assert fast.results is results and fast.preprocess_result == 1 and fast.score == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.score = 1.0  # type: ignore[misc]
