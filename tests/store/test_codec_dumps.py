"""``codec.dumps``' fast path for plain ASCII strings gives the bytes the full path gives,
and every string, hostile or not, reads back as itself."""

from __future__ import annotations

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
