"""``codec.dumps``' fast path for plain ASCII strings gives the bytes the full path gives,
and every string, hostile or not, reads back as itself."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.store.codec import _ENCODER, NUL_ESCAPE, dumps, loads


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_an_ascii_string_is_encoded_as_the_encoder_does(text: str) -> None:
    if "\x00" not in text:
        assert dumps(text) == _ENCODER.encode(text)
    assert loads(dumps(text)) == text


@given(st.text())  # any code point, lone surrogates and NUL included
def test_any_string_round_trips(text: str) -> None:
    encoded = dumps(text)
    assert "\x00" not in encoded and "\\u0000" not in encoded
    assert loads(encoded) == text


def test_the_escape_character_and_nul_take_the_escaping_path() -> None:
    assert dumps(f"a{NUL_ESCAPE}") != _ENCODER.encode(f"a{NUL_ESCAPE}")
    assert loads(dumps(f"a\x00{NUL_ESCAPE}0")) == f"a\x00{NUL_ESCAPE}0"
    assert dumps('plain "quoted"\n') == '"plain \\"quoted\\"\\n"'


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5).filter(lambda k: "\x00" not in k), inner, max_size=4)
    ),
    max_leaves=12,
)
"""JSON values without NUL, the escape character's uses or lone surrogates (those go
through the escaping path, tested above)."""


@given(_JSON_VALUES)
def test_a_non_string_value_is_encoded_as_the_encoder_does(value: object) -> None:
    """``dumps`` calls the encoder's C function it builds once, not ``_ENCODER.encode``
    (which builds one per call): the text must be the same, and read back as the value."""
    if NUL_ESCAPE in repr(value):
        return
    assert dumps(value) == _ENCODER.encode(value)
    assert loads(dumps(value)) == value


def test_values_the_encoder_cannot_take_as_they_are() -> None:
    """Non-finite floats become ``null``, other types through the default hook, as before."""
    assert dumps({"a": [float("nan"), float("inf"), 1.5]}) == '{"a":[null,null,1.5]}'
    assert dumps({"t": (1, "x"), "s": frozenset({2})}) == '{"t":[1,"x"],"s":[2]}'
    assert dumps({1: 2, None: 3}) == '{"1":2,"null":3}'
    circular: list[object] = []
    circular.append(circular)
    with pytest.raises(RecursionError):  # as before: an error, not a hang or a crash
        dumps(circular)
