"""Bigram Dice similarity, exactly as npm ``string-similarity@4.0.4`` ``compareTwoStrings``.

The content-similarity scorer and ``checks.similarity`` score with this function, and their
reference values come from the npm package, so it is ported operation for operation:

1. delete every run of JavaScript whitespace (``/\\s+/g``) from both strings;
2. equal strings (including two empty ones) score 1; a string shorter than 2 scores 0;
3. Sørensen–Dice over character bigrams *with multiplicity*:
   ``2 · |bigrams(a) ∩ bigrams(b)| / (len(a) + len(b) − 2)``.

The npm loop decrements a bigram's remaining count for each match in the second string, which
yields exactly ``Σ min(count_a, count_b)`` over bigrams; that is what is computed here, with
tuple bigrams (the fastest CPython variant measured).

JavaScript semantics that differ from Python's and are emulated here:

* ``\\s`` in JavaScript is a fixed set (``JS_WHITESPACE``); Python's ``\\s``/``str.split``
  additionally match ``\\x1c``–``\\x1f`` and ``\\x85`` and do not match ``\\ufeff``.
* JavaScript strings are UTF-16: lengths and bigrams count code units, so a character
  outside the BMP (most emoji) is two units and forms a bigram of its two surrogates.
  Strings containing such characters are converted to their UTF-16 code units first
  (``to_utf16_units``); the check costs nothing for ASCII text.

This module also holds the small JavaScript-string helpers shared by the other ports in
``assay.scorers._lib`` (keyword extraction, textual difference, sentiment).
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import Any, TypeVar, cast

JS_WHITESPACE: str = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""Exactly the characters JavaScript's ``\\s`` and ``String.prototype.trim`` treat as
whitespace (verified under Node 20 over the whole BMP; no astral character is whitespace)."""

JS_WS_CLASS: str = "[" + re.escape(JS_WHITESPACE) + "]"
"""``JS_WHITESPACE`` as a regex character class, for building patterns."""

_JS_WS_RUN = re.compile(JS_WS_CLASS + "+")
# In ASCII text, Python's whitespace is JavaScript's plus these four separator controls; when
# they are absent, the much faster ``str.split()`` splits exactly like ``/\s+/``.
_PY_ONLY_ASCII_WS = re.compile("[\x1c-\x1f]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_T = TypeVar("_T")


def _count_elements_fallback(mapping: dict[Any, int], iterable: Iterable[Any]) -> None:
    get = mapping.get
    for element in iterable:
        mapping[element] = get(element, 0) + 1


# ``Counter(iterable)`` spends about half its time in Python-level ``__init__``/``update``
# checks; the C helper it ends up calling counts into a plain dict twice as fast. It is a
# private CPython name, so fall back to an equivalent loop if it ever disappears.
_count_elements = cast(
    "Callable[[dict[Any, int], Iterable[Any]], None]",
    getattr(collections, "_count_elements", _count_elements_fallback),
)


def count_elements(items: Iterable[_T]) -> dict[_T, int]:
    """``collections.Counter(items)`` as a plain dict, about twice as fast for short inputs."""
    counts: dict[_T, int] = {}
    _count_elements(counts, items)
    return counts


def multiset_intersection_size(first: dict[_T, int], second: dict[_T, int]) -> int:
    """``Σ min(first[k], second[k])``: what the reference's greedy match-and-decrement loops
    count (bigrams in ``compareTwoStrings``, words in the textual-difference scorer)."""
    if len(first) > len(second):
        first, second = second, first
    other = second.get
    size = 0
    for key, count in first.items():
        other_count = other(key)
        if other_count:
            size += count if count < other_count else other_count
    return size


def _ascii_split_is_js(text: str) -> bool:
    """True when ``text.split()`` gives the same words as a JavaScript ``/\\s+/`` split."""
    return text.isascii() and _PY_ONLY_ASCII_WS.search(text) is None


def js_words(text: str) -> list[str]:
    """``text.split(/\\s+/).filter(w => w.length > 0)`` with JavaScript's whitespace set."""
    if _ascii_split_is_js(text):
        return text.split()
    return [word for word in _JS_WS_RUN.split(text) if word]


def js_remove_whitespace(text: str) -> str:
    """``text.replace(/\\s+/g, '')``."""
    if _ascii_split_is_js(text):
        return "".join(text.split())
    return _JS_WS_RUN.sub("", text)


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def has_astral(text: str) -> bool:
    """True when ``text`` has a character outside the BMP (two UTF-16 code units in JS)."""
    return not text.isascii() and _ASTRAL.search(text) is not None


def _surrogate_pair(match: re.Match[str]) -> str:
    offset = ord(match.group()) - 0x10000
    return chr(0xD800 + (offset >> 10)) + chr(0xDC00 + (offset & 0x3FF))


def to_utf16_units(text: str) -> str:
    """``text`` with each astral character replaced by its two UTF-16 surrogate code points.

    The result has one Python character per JavaScript code unit, so ``len``, indexing and
    character comparisons behave as they do on the JavaScript string.
    """
    if not has_astral(text):
        return text
    return _ASTRAL.sub(_surrogate_pair, text)


def compare_two_strings(first: str, second: str) -> float:
    """``stringSimilarity.compareTwoStrings(first, second)`` (string-similarity@4.0.4)."""
    first = js_remove_whitespace(first)
    second = js_remove_whitespace(second)
    if first == second:
        return 1.0
    first = to_utf16_units(first)
    second = to_utf16_units(second)
    if len(first) < 2 or len(second) < 2:
        return 0.0
    intersection = multiset_intersection_size(
        count_elements(pairwise(first)), count_elements(pairwise(second))
    )
    return 2.0 * intersection / (len(first) + len(second) - 2)
