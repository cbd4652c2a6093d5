"""``analysis.formatting``: cutting text at word boundaries."""

from __future__ import annotations

from assay.analysis.formatting import clip, split_words


def test_split_words_cuts_at_the_last_space_and_loses_nothing_but_the_space() -> None:
    text = "alpha beta gamma delta"
    head, rest = split_words(text, 13)  # "alpha beta ga|mma": the cut moves back to "beta"
    assert (head, rest) == ("alpha beta", "gamma delta")
    assert split_words(text, 10) == ("alpha beta", "gamma delta")  # a space right at the limit
    assert split_words(text, 100) == (text, "")
    assert split_words("line one\nline two", 12) == ("line one", "line two")


def test_a_word_longer_than_the_window_is_cut_hard() -> None:
    url = "https://example.com/" + "x" * 50
    head, rest = split_words(url, 20)
    assert head == url[:20] and head + rest == url


def test_clip_never_cuts_a_word_and_marks_the_cut() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    for limit in range(5, len(text)):
        shown = clip(text, limit)
        assert len(shown) <= limit and shown.endswith("…")
        assert text.startswith(shown[:-1])
        assert text[len(shown) - 1] == " "  # the cut fell on a space
    assert clip(text, len(text)) == text
