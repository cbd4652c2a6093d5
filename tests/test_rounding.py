import pytest

from assay.rounding import js_round, round2, round2_plain


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.005, 1.01), (0.125, 0.13), (2.675, 2.68), (0.8333333, 0.83), (0.0, 0.0), (1.0, 1.0)],
)
def test_round2_rounds_half_up_like_javascript(value: float, expected: float) -> None:
    assert round2(value) == expected


def test_python_round_would_differ() -> None:
    # the reason the helper exists: Python's round() is half-to-even and binary-exact
    assert round(0.125, 2) == 0.12
    assert round2(0.125) == 0.13


def test_js_round_negative_half_goes_up() -> None:
    assert js_round(-0.5) == 0.0
    assert js_round(-1.5) == -1.0
    assert js_round(2.5) == 3.0


def test_round2_plain_has_no_epsilon() -> None:
    assert round2_plain(1.005) == 1.0  # 1.005 * 100 = 100.49999...
    assert round2(1.005) == 1.01
