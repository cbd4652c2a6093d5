"""The textual-difference scorer's preprocess step (``@mastra/evals`` 1.10.2), exactly.

The reference computes, on the raw joined input and output (case- and whitespace-sensitive):

* ``ratio`` — 1 for equal strings, 0 when either is empty, else ``2·LCS / (len_a + len_b)``
  where LCS is the classic character-level longest common *subsequence* (the reference's
  O(m·n) DP). ``assay.scorers._lib.lcs.lcs_length`` computes exactly that length
  bit-parallel (checked against a DP and against RapidFuzz in the tests), so it is used
  instead of a DP. This is deliberately not ``difflib.SequenceMatcher.ratio``.
* ``changes`` — a word-level count. Words are ``split(/\\s+/)`` without empties. When both
  sides have the same words it is 0 for identical raw strings and otherwise
  ``|#words_in − #words_out| || 1``, which is always 1 (equal word lists have equal lengths).
  Otherwise an empty side gives the other side's word count, and else
  ``max(#in, #out) − matches`` where each input word greedily takes the first unused equal
  output word; that greedy count equals ``Σ min(count_in(w), count_out(w))``.
* ``lengthDiff`` — ``|len_a − len_b| / max(len_a, len_b)`` (0 when both are empty);
  ``confidence = 1 − lengthDiff``.

Lengths and LCS are over UTF-16 code units, as in JavaScript: text with astral characters
(emoji) is converted to code units first. Whitespace is JavaScript's ``\\s`` set.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.scorers._lib.dice import (
    count_elements,
    js_words,
    multiset_intersection_size,
    to_utf16_units,
)
from assay.scorers._lib.lcs import lcs_length


@dataclass(frozen=True, slots=True)
class TextDiff:
    """The reference's ``{ratio, confidence, changes, lengthDiff}``; the score is ``ratio``."""

    ratio: float
    confidence: float
    changes: int
    length_diff: float


def _ratio(first: str, second: str) -> float:
    if first == second:
        return 1.0
    if not first or not second:
        return 0.0
    matches = lcs_length(first, second)
    return 2.0 * matches / (len(first) + len(second))


def _count_changes(first: str, second: str) -> int:
    first_words = js_words(first)
    second_words = js_words(second)
    if first_words == second_words:
        return 0 if first == second else 1
    if not first_words:
        return len(second_words)
    if not second_words:
        return len(first_words)
    matches = multiset_intersection_size(count_elements(first_words), count_elements(second_words))
    return max(len(first_words), len(second_words)) - matches


def text_difference(input_text: str, output_text: str) -> TextDiff:
    """Textual-difference preprocess result for the joined input and output texts."""
    first = to_utf16_units(input_text)
    second = to_utf16_units(output_text)
    longest = max(len(first), len(second))
    length_diff = abs(len(first) - len(second)) / longest if longest > 0 else 0.0
    return TextDiff(
        ratio=_ratio(first, second),
        confidence=1 - length_diff,
        changes=_count_changes(first, second),
        length_diff=length_diff,
    )
