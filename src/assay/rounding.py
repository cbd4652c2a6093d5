"""JavaScript-compatible rounding.

The reference implementation rounds with ``Math.round((x + Number.EPSILON) * 100) / 100``.
``Math.round`` rounds half *up* (towards +inf), unlike Python's ``round`` (half to even), so
``round(0.125, 2) == 0.12`` in Python but ``0.13`` in the reference. Every place where the
reference rounds uses these helpers, so scores match it to the last digit.
"""

from __future__ import annotations

import math

_JS_EPSILON = 2.220446049250313e-16


def js_round(x: float) -> float:
    """JavaScript ``Math.round``: nearest integer, halves rounded towards +infinity."""
    return float(math.floor(x + 0.5))


def round2(x: float) -> float:
    """The reference's ``roundToTwoDecimals``: ``Math.round((x + EPSILON) * 100) / 100``."""
    return js_round((x + _JS_EPSILON) * 100) / 100


def round2_plain(x: float) -> float:
    """``Math.round(x * 100) / 100`` (no epsilon), used by the unified trajectory scorer."""
    return js_round(x * 100) / 100
