"""A user's regex is refused for deep nesting whatever the interpreter's recursion limit."""

from __future__ import annotations

import sys

import pytest

from assay.patterns import MAX_NESTING, PatternError, compile_user_pattern, nesting_depth


@pytest.mark.parametrize(
    ("pattern", "depth"),
    [("abc", 0), ("(a)(b)", 1), ("((a)(b))", 2), (r"\(\(", 0), ("[(((]", 0), (r"[\]((]", 0)],
)
def test_nesting_depth_counts_groups_outside_classes_and_escapes(pattern: str, depth: int) -> None:
    assert nesting_depth(pattern) == depth


def test_deep_nesting_is_refused_even_when_the_recursion_limit_is_raised() -> None:
    deep = "(" * 5000 + "a" + ")" * 5000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)  # what a host process or a library may do
    try:
        with pytest.raises(PatternError, match="nested too deeply"):
            compile_user_pattern(deep)
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(PatternError, match="nested too deeply"):
        compile_user_pattern(deep)


def test_patterns_up_to_the_limit_compile_and_other_errors_say_why() -> None:
    fine = "(" * MAX_NESTING + "a" + ")" * MAX_NESTING
    assert compile_user_pattern(fine).fullmatch("a")
    with pytest.raises(PatternError, match="missing \\)"):
        compile_user_pattern("(unclosed")
    with pytest.raises(PatternError, match="too large"):
        compile_user_pattern("a{99999999999}")
