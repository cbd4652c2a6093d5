"""lm-eval's own filter tests (38 cases from ``lmeval_cases.json``), run through the public
API: every case is built by name with its kwargs and run by ``apply_filter_pipeline``.

The kormedmcqa cases exercise a task-local filter: it is loaded from a fixture file by path
(as a task YAML's ``!function utils.ExtractChoiceFilter`` would load it) and registered
with ``register_filter``, the path third-party filters take.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from assay.tasks.filters import (
    FILTERS,
    FilterConfigError,
    FilterError,
    FilterStep,
    apply_filter_pipeline,
    register_filter,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES: list[dict[str, Any]] = json.loads(
    (FIXTURES / "lmeval" / "lmeval_filter_cases.json").read_text(encoding="utf-8")
)
KORMEDMCQA = "kormedmcqa_extract_choice"


def load_task_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"task_utils_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kormedmcqa() -> Iterator[ModuleType]:
    module = load_task_module(FIXTURES / "tasks" / "kormedmcqa_filters.py")
    register_filter(KORMEDMCQA)(module.ExtractChoiceFilter)
    try:
        yield module
    finally:
        FILTERS.unregister(KORMEDMCQA)


def run_case(case: dict[str, Any]) -> Any:
    """The case's result through the public API (its input shape decides how)."""
    name, args, given = case["name"], case["args"], case["input"]
    if name == "kormedmcqa.extract_choice":  # one text in, one letter out
        filtered = apply_filter_pipeline([(KORMEDMCQA, args)], [[given["text"]]], [{}])
        assert len(filtered) == 1 and len(filtered[0]) == 1
        return filtered[0][0]
    if name == "kormedmcqa.ExtractChoiceFilter":
        name = KORMEDMCQA
    return apply_filter_pipeline([(name, args)], given["resps"], given["docs"])


def test_the_fixture_holds_the_38_filter_cases() -> None:
    assert len(CASES) == 38
    assert {case["kind"] for case in CASES} == {"filter"}


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{i:02d}-{case['test']}" for i, case in enumerate(CASES)]
)
def test_lmeval_filter_case(case: dict[str, Any], kormedmcqa: ModuleType) -> None:
    compare = case["compare"]
    if compare == "exact":
        assert run_case(case) == case["expected"]
    elif compare == "raises":
        with pytest.raises((FilterError, FilterConfigError)):
            run_case(case)
    else:
        pytest.fail(f"compare mode {compare!r} is not handled by this test")


def test_the_task_local_helper_agrees_with_the_registered_filter(kormedmcqa: ModuleType) -> None:
    texts = [case["input"]["text"] for case in CASES if case["name"] == "kormedmcqa.extract_choice"]
    assert len(texts) == 15
    through_registry = apply_filter_pipeline([(KORMEDMCQA, {})], [texts], [{}])
    assert through_registry == [[kormedmcqa.extract_choice(text) for text in texts]]


def test_a_task_local_filter_can_also_be_given_as_a_callable(kormedmcqa: ModuleType) -> None:
    # a YAML ``function: !function utils.ExtractChoiceFilter``, resolved to the class
    steps: list[FilterStep] = [(kormedmcqa.ExtractChoiceFilter, {}), ("take_first", {})]
    assert apply_filter_pipeline(steps, [["정답: C"], ["모르겠어요"]], [{}, {}]) == ["C", ""]
