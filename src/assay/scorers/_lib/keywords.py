"""Keyword extraction, exactly as npm ``keyword-extractor@0.0.28`` ``extract``.

The keyword-coverage scorer calls ``extract(text, {language: 'english', remove_digits: true,
return_changed_case: true, remove_duplicates: true})``; its reference scores depend on every
quirk of that function, so this is a transcription of ``lib/keyword_extractor.js`` for those
options only (no n-grams, no chained words):

1. falsy input → ``[]``; delete HTML-like tags ``/(<([^>]+)>)/gi``; trim; empty → ``[]``.
2. split on *each single* whitespace character (``/\\s/``). The empty tokens this produces
   are dropped at step 3 anyway, so splitting on whitespace runs is equivalent (and faster).
3. per token: a token containing ``http://`` or ``https://`` is kept verbatim (case too);
   otherwise delete ``. , ; ! ? ( ) : "`` and the curly quotes ``“ ” ‘ ’``, plus an
   apostrophe at the token's first and one at its last position (positions in the token as
   split, before the other deletions). A one-character result loses ``_ @ & #``. A result made
   of ASCII digits only is dropped (JavaScript's ``\\d`` is ``[0-9]``). Empty results are
   dropped.
4. a token whose lower-cased form is in the 570-word SMART stop list is dropped; otherwise the
   lower-cased form is returned (URL tokens keep their original case).
5. duplicates are removed, keeping first occurrences.

JavaScript's UTF-16 lengths do not matter here: the only length tests are "length 1" before
deleting ``_@&#`` and "all digits", and neither can differ for a string with an astral
character. ``str.lower`` follows the same Unicode full case mapping as ``toLowerCase``.
"""

from __future__ import annotations

import re

from assay.scorers._lib.dice import js_trim, js_words
from assay.scorers._lib.stopwords_en import STOPWORDS_EN

_HTML_TAG = re.compile(r"<[^>]+>")
# ``/\.|,|;|!|\?|\(|\)|:|"|^'|'$|“|”|‘|’/g`` minus the two anchored apostrophes, which are
# handled by slicing because they refer to the token before any other deletion.
_DELETE_CHARS = str.maketrans("", "", '.,;!?():"“”‘’')
_SINGLE_CHAR_DELETE = frozenset("_@&#")


def _is_url(token: str) -> bool:
    """``/https?:\\/\\/.*[\\r\\n]*/g`` matches iff the token contains one of these prefixes."""
    return "http://" in token or "https://" in token


def _clean(token: str) -> str:
    """Step 3 for one non-empty token: the word to keep, or ``''`` to drop it."""
    if _is_url(token):
        word = token
    else:
        start = 1 if token[0] == "'" else 0
        end = len(token)
        if token[-1] == "'" and end - 1 >= start:
            end -= 1
        word = token[start:end].translate(_DELETE_CHARS)
    if len(word) == 1 and word in _SINGLE_CHAR_DELETE:
        return ""
    if word.isascii() and word.isdigit():
        return ""
    return word


def extract(text: str) -> list[str]:
    """``keyword_extractor.extract(text, {language: 'english', remove_digits: true,
    return_changed_case: true, remove_duplicates: true})``."""
    if not text:
        return []
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    if not js_trim(text):
        return []
    keywords: dict[str, None] = {}
    for token in js_words(text):
        word = _clean(token)
        if not word:
            continue
        lowered = word.lower()
        if lowered in STOPWORDS_EN:
            continue
        keywords[word if _is_url(word) else lowered] = None
    return list(keywords)
