"""Every acceptance case of the reference (tests/fixtures/scorer_cases.json), end to end
through the registry: ``create_scorer(type, **options)`` then ``scorer.run(...)``.

Expected scores come from executing ``@mastra/evals@1.10.2``; each must match within the
case's tolerance, except completeness, whose element extraction approximates the JS NLP
library: there the case's ``test_bounds`` (the reference test's own assertions) must hold,
and the number of exact matches is reported by ``test_completeness_exact_match_count``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import ScorerParamsError, create_scorer
from assay.testing.runs import create_test_message

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "scorer_cases.json").read_text()
)

CHECK_ARG_NAMES: dict[str, list[str]] = {
    "checks.includes": ["expected"],
    "checks.excludes": ["unwanted"],
    "checks.equals": ["expected"],
    "checks.matches": ["regex"],
    "checks.similarity": ["expected"],
    "checks.calledTool": ["name"],
    "checks.didNotCall": ["name"],
    "checks.toolOrder": ["names"],
    "checks.maxToolCalls": ["max"],
    "checks.usedNoTools": [],
    "checks.noToolErrors": [],
}


def _params(case: dict[str, Any]) -> dict[str, Any]:
    if case["scorer"] in CHECK_ARG_NAMES:
        names = CHECK_ARG_NAMES[case["scorer"]]
        args = list(case.get("args") or [])
        params: dict[str, Any] = {}
        for name, value in zip(names, args, strict=False):
            if isinstance(value, dict) and "regex" in value:
                params["regex"] = value["regex"]
                params["flags"] = value.get("flags", "")
            else:
                params[name] = value
        if len(args) > len(names) and isinstance(args[len(names)], dict):
            params.update(args[len(names)])
        return params
    return dict(case["options"] or {})


def _message(raw: dict[str, Any]) -> dict[str, Any]:
    return create_test_message(
        raw["content"], raw["role"], tool_invocations=raw.get("toolInvocations")
    )


def _run_kwargs(case: dict[str, Any]) -> dict[str, Any]:
    raw_input = case["input"]
    if isinstance(raw_input, dict) and "inputMessages" in raw_input:
        messages = raw_input["inputMessages"]
        run_input: Any = {
            "inputMessages": None if messages is None else [_message(m) for m in messages],
            "rememberedMessages": [],
            "systemMessages": [],
            "taggedSystemMessages": {},
        }
    else:
        run_input = raw_input
    output = case["output"]
    if isinstance(output, list):
        output = [_message(m) for m in output]
    return {
        "input": run_input,
        "output": output,
        "expected_trajectory": case.get("expectedTrajectory"),
    }


def _check_bounds(score: float, bounds: dict[str, Any]) -> None:
    for key, bound in bounds.items():
        if key == "close_to":
            assert abs(score - bound) < 0.005, f"{score} not close to {bound}"
        elif key == "lt":
            assert score < bound
        elif key == "lte":
            assert score <= bound
        elif key == "gt":
            assert score > bound
        elif key == "gte":
            assert score >= bound
        elif key in ("eq", "equals"):
            assert score == bound
        else:
            raise AssertionError(f"unknown bound {key}")


async def _score(case: dict[str, Any]) -> Any:
    scorer = create_scorer(case["scorer"], **_params(case))
    return await scorer.run(**_run_kwargs(case))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
async def test_case(case: dict[str, Any]) -> None:
    error = case["expected_error"]
    if error and error["when"] == "factory":
        with pytest.raises(ScorerParamsError) as excinfo:
            create_scorer(case["scorer"], **_params(case))
        if error["message_contains"]:
            assert error["message_contains"] in str(excinfo.value)
        return
    result = await _score(case)
    if error:
        assert result.status == "error", result
        assert result.score is None
        if error["message_contains"]:
            assert result.error is not None
            assert error["message_contains"] in result.error.message
        return
    assert result.status == "ready", result.error
    assert result.score is not None
    if case["scorer"] == "completeness":
        _check_bounds(result.score, case["test_bounds"] or {})
    else:
        assert abs(result.score - case["expected_score"]) <= case["tolerance"], (
            f"{case['id']}: {result.score} != {case['expected_score']}"
        )
        if case["test_bounds"]:
            _check_bounds(result.score, case["test_bounds"])


def test_completeness_exact_match_count() -> None:
    """Report (and pin) how many completeness cases match the reference exactly."""
    import asyncio

    cases = [c for c in CASES if c["scorer"] == "completeness" and not c["expected_error"]]

    async def all_scores() -> list[float | None]:
        return [(await _score(c)).score for c in cases]

    scores = asyncio.run(all_scores())
    exact = sum(
        1
        for case, score in zip(cases, scores, strict=True)
        if score is not None and abs(score - case["expected_score"]) <= case["tolerance"]
    )
    print(f"completeness: {exact}/{len(cases)} cases match the reference score exactly")
    assert exact == len(cases)


def test_case_file_is_complete() -> None:
    assert len(CASES) == 130
    assert sum(1 for c in CASES if c["category"] == "required") == 68
