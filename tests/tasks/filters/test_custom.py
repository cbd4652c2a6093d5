"""``custom``: the task's ``filter_fn(resps, docs)`` decides everything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.tasks.filters import FilterStep, apply_filter_pipeline


def answer_from_doc(resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [[f"{doc['prefix']}{r}" for r in entry] for entry, doc in zip(resps, docs, strict=True)]


def test_custom_calls_filter_fn_with_all_resps_and_docs() -> None:
    docs = [{"prefix": "a:"}, {"prefix": "b:"}]
    out = apply_filter_pipeline([("custom", {"filter_fn": answer_from_doc})], [["1"], ["2"]], docs)
    assert out == [["a:1"], ["b:2"]]


def test_custom_result_is_used_unchanged_by_the_next_step() -> None:
    steps: list[FilterStep] = [
        ("custom", {"filter_fn": lambda resps, docs: [e[::-1] for e in resps]}),
        ("take_first", {}),
    ]
    assert apply_filter_pipeline(steps, [["x", "y"]], [{}]) == ["y"]
