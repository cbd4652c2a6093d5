"""Compiling a regular expression that came from a user, with one kind of error.

``re.compile`` fails three ways on a user's pattern: ``re.error``, ``OverflowError`` for a
huge repeat count (``a{99999999999}``), and ``RecursionError`` for deep nesting. The last
depends on the interpreter's recursion limit, which a host process or a library may raise
(then a 5,000-deep pattern compiles, or, far enough, overflows the C stack). So nesting is
measured before compiling and refused past ``MAX_NESTING``, whatever the limit is.
"""

from __future__ import annotations

import re

MAX_NESTING = 100
"""Deepest group nesting accepted: far beyond any real pattern, far below the stack."""


class PatternError(ValueError):
    """A user's regular expression that cannot be compiled; the message says why."""


def nesting_depth(pattern: str) -> int:
    """The deepest nesting of groups in ``pattern``: parentheses counted outside character
    classes and escapes (an over-estimate for odd patterns is harmless: it only refuses)."""
    depth = deepest = 0
    in_class = escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(depth - 1, 0)
    return deepest


def compile_user_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` compiled, or a ``PatternError`` whose message is the reason alone."""
    if nesting_depth(pattern) > MAX_NESTING:
        raise PatternError(f"nested too deeply (more than {MAX_NESTING} groups)")
    try:
        return re.compile(pattern, flags)
    except (re.error, OverflowError) as exc:
        raise PatternError(str(exc)) from None
    except RecursionError:
        raise PatternError(f"nested too deeply (more than {MAX_NESTING} groups)") from None
