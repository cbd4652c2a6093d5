"""AFINN sentiment, exactly as npm ``sentiment@5.0.2`` ``analyze``, and the tone scorer's step.

The tone scorer's reference values come from ``new Sentiment().analyze(text)``, so its
tokenizer and scoring are transcribed with their quirks:

* tokenize: lower-case; ``\\n`` → space; each of ``. , / # ! ? $ % ^ & * ; : { } = _ ` " ~ ( )``
  → space; every run of *two or more* JavaScript whitespace characters → one space (a single
  tab or other non-space whitespace character survives, inside a token); trim; split on
  ``' '``. Empty or blank text therefore gives one empty token.
* labels: AFINN-165 (``languages/en/labels.json``, 3,382 entries) merged with the emoji
  sentiment table (``build/emoji.json``, 767 entries) — ``lib/language-processor.js`` does
  ``Object.assign(labels, emojis)``, so emoji tokens score too. Both files are vendored
  byte-for-byte beside this module (see README.md there).
* scoring: each token with a label adds its valence, negated when the previous token is a
  negator. The reference looks the previous token up in a plain JS object
  (``negators[prevtoken]``), so inherited ``Object.prototype`` members count as negators too;
  of those, only ``constructor`` can be a token (tokens are lower-case and ``_`` is a
  separator), and Node confirms ``analyze('constructor good').score == -3``.
  The reference iterates tokens from last to first; valences are integers, so the order of
  the sum cannot change it.
* ``comparative = score / #tokens``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TypeVar

from assay.scorers._lib.dice import JS_WHITESPACE, JS_WS_CLASS

_NEGATORS = frozenset(
    {
        # languages/en/negators.json
        "cant",
        "can't",
        "dont",
        "don't",
        "doesnt",
        "doesn't",
        "not",
        "non",
        "wont",
        "won't",
        "isnt",
        "isn't",
        # Object.prototype member reachable as a lower-case token (see module docstring).
        "constructor",
    }
)

# ``.replace(/\n/g, ' ').replace(/[.,\/#!?$%\^&\*;:{}=_`\"~()]/g, ' ')`` in one pass.
_SPACED = '\n.,/#!?$%^&*;:{}=_`"~()'
_TO_SPACE = str.maketrans(dict.fromkeys(_SPACED, " "))
_TO_SPACE_BYTES = bytes.maketrans(_SPACED.encode("ascii"), b" " * len(_SPACED))
_WS_RUN_2 = re.compile(JS_WS_CLASS + "{2,}")
# After the translation above, ASCII text without these has ' ' as its only whitespace, and
# then collapse + trim + split(' ') is exactly ``split()`` (or [''] when nothing is left).
_OTHER_ASCII_WS = re.compile(b"[\t\v\f\r\x1c-\x1f]")
# The tone scorer's sentence splitter, ``/[^.!?]+[.!?]+/g``.
_SENTENCE = re.compile(r"[^.!?]+[.!?]+")

_Token = TypeVar("_Token", str, bytes)


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """The label table, plus bytes-keyed copies for the ASCII fast path."""

    labels: dict[str, int]
    ascii_labels: dict[bytes, int]
    ascii_keys: frozenset[bytes]
    ascii_negators: frozenset[bytes]


@cache
def _lexicon() -> _Lexicon:
    """AFINN-165 plus emoji valences (4,149 entries), loaded once, on first use."""
    package = files("assay.scorers._lib")
    labels: dict[str, int] = json.loads(package.joinpath("afinn_165.json").read_text("utf-8"))
    labels.update(json.loads(package.joinpath("sentiment_emoji.json").read_text("utf-8")))
    ascii_labels = {key.encode("ascii"): value for key, value in labels.items() if key.isascii()}
    return _Lexicon(
        labels=labels,
        ascii_labels=ascii_labels,
        ascii_keys=frozenset(ascii_labels),
        ascii_negators=frozenset(word.encode("ascii") for word in _NEGATORS),
    )


def tokenize(text: str) -> list[str]:
    """``sentiment/lib/tokenize.js``."""
    text = text.lower().translate(_TO_SPACE)
    if text.isascii() and _OTHER_ASCII_WS.search(text.encode("ascii")) is None:
        return text.split() or [""]
    return _WS_RUN_2.sub(" ", text).strip(JS_WHITESPACE).split(" ")


def _ascii_tokens(text: str) -> list[bytes] | None:
    """``tokenize`` on bytes for ASCII text (about 2.5x faster); ``None`` when not applicable."""
    if not text.isascii():
        return None
    spaced = text.encode("ascii").lower().translate(_TO_SPACE_BYTES)
    if _OTHER_ASCII_WS.search(spaced) is not None:
        return None
    return spaced.split() or [b""]


def _score(tokens: list[_Token], labels: dict[_Token, int], negators: frozenset[_Token]) -> int:
    """Sum of valences, each negated when the previous token is a negator."""
    score = 0
    for index, valence in enumerate(map(labels.get, tokens)):
        if valence is not None:
            score += -valence if index and tokens[index - 1] in negators else valence
    return score


@dataclass(frozen=True, slots=True)
class SentimentResult:
    """The ``score`` and ``comparative`` fields of ``analyze``'s result."""

    score: int
    comparative: float


def _score_and_count(text: str) -> tuple[int, int]:
    """``(score, #tokens)`` of ``analyze(text)``; the hot path, without result objects."""
    lexicon = _lexicon()
    ascii_tokens = _ascii_tokens(text)
    if ascii_tokens is not None:
        if lexicon.ascii_keys.isdisjoint(ascii_tokens):
            return 0, len(ascii_tokens)
        return _score(ascii_tokens, lexicon.ascii_labels, lexicon.ascii_negators), len(ascii_tokens)
    tokens = tokenize(text)
    return _score(tokens, lexicon.labels, _NEGATORS), len(tokens)


def analyze(text: str) -> SentimentResult:
    """``new Sentiment().analyze(text)`` (English, no extras), score and comparative only."""
    score, count = _score_and_count(text)
    return SentimentResult(score=score, comparative=score / count)


def comparative(text: str) -> float:
    """``analyze(text).comparative``."""
    score, count = _score_and_count(text)
    return score / count


def tone_scores(text: str, reference_tone: str | None) -> dict[str, float]:
    """The tone scorer's preprocess result for the joined output ``text``.

    With a (truthy) ``reference_tone``: ``{score, responseSentiment, referenceSentiment,
    difference}`` where ``score = max(0, 1 − |r − ref|)`` of the comparative scores.
    Without: the stability branch — sentences are the matches of ``[^.!?]+[.!?]+`` (text
    after the last terminator is dropped; no match means the whole text is one sentence),
    ``score = max(0, 1 − population variance)`` of their comparative scores, returned as
    ``{score, avgSentiment, sentimentVariance}``. Sums run left to right like the
    reference's ``reduce`` (not ``math.fsum``/3.12 ``sum``) so the floats match bit for bit.
    """
    if reference_tone:
        response = comparative(text)
        reference = comparative(reference_tone)
        difference = abs(response - reference)
        return {
            "score": max(0.0, 1 - difference),
            "responseSentiment": response,
            "referenceSentiment": reference,
            "difference": difference,
        }
    sentences = _SENTENCE.findall(text) or [text]
    sentiments = [comparative(sentence) for sentence in sentences]
    total = 0.0
    for value in sentiments:
        total += value
    average = total / len(sentiments)
    squares = 0.0
    for value in sentiments:
        deviation = value - average
        squares += deviation * deviation
    variance = squares / len(sentiments)
    return {
        "score": max(0.0, 1 - variance),
        "avgSentiment": average,
        "sentimentVariance": variance,
    }
