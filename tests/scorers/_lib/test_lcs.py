"""The hand-written bit-parallel LCS against two independent answers: RapidFuzz's
``LCSseq.similarity`` (the library it replaced, kept in the ``dev`` extra for this) and the
textbook O(m·n) DP on the small inputs."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from assay.scorers._lib.dice import to_utf16_units
from assay.scorers._lib.lcs import lcs_length
from tests.optional import required_module

LCSseq = required_module("rapidfuzz.distance").LCSseq


def _dp_lcs(first: str, second: str) -> int:
    previous = [0] * (len(second) + 1)
    for char in first:
        current = [0]
        for j, other in enumerate(second, start=1):
            current.append(previous[j - 1] + 1 if char == other else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def _check(first: str, second: str) -> None:
    expected = LCSseq.similarity(first, second)
    assert lcs_length(first, second) == expected, (first[:80], second[:80])
    assert lcs_length(second, first) == expected, "the LCS is symmetric"


# Small alphabets make long common subsequences; lengths cross the 64-bit word boundaries.
_ALPHABETS = (
    "ab",
    "ab c",
    "abcdefgh",
    "aé\u0301😀\u0000\n",
    "".join(map(chr, range(0x4E00, 0x4E40))),
)


@pytest.mark.parametrize("alphabet", _ALPHABETS, ids=["ab", "words", "eight", "unicode", "cjk"])
def test_matches_rapidfuzz_and_the_dp_on_seeded_random_strings(alphabet: str) -> None:
    rng = random.Random(27)
    for _ in range(400):
        first = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 140)))
        second = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 140)))
        _check(first, second)
        assert lcs_length(first, second) == _dp_lcs(first, second)


def test_matches_rapidfuzz_on_edited_copies() -> None:
    # a shared prefix/suffix around an edit is the common case of textual-difference
    rng = random.Random(2027)
    for _ in range(300):
        base = "".join(rng.choice("the quick brown fox, ") for _ in range(rng.randint(1, 300)))
        edited = list(base)
        for _ in range(rng.randint(1, 5)):
            at = rng.randrange(len(edited) + 1)
            if rng.random() < 0.5 and at < len(edited):
                del edited[at]
            else:
                edited.insert(at, rng.choice("xyz q"))
        _check(base, "".join(edited))


@pytest.mark.parametrize(
    ("first", "second", "length"),
    [
        ("", "", 0),
        ("", "abc", 0),
        ("abc", "", 0),
        ("abc", "abc", 3),
        ("abc", "xyz", 0),
        ("aaaa", "aa", 2),
        ("abab", "baba", 3),
        ("cbc", "bac", 2),
        # precomposed "é" and "e" + combining acute are different code points
        ("caf\u00e9", "cafe\u0301", 3),
        # an astral character is one code point here, two code units after to_utf16_units
        ("😀", "😁", 0),
        (to_utf16_units("😀"), to_utf16_units("😁"), 1),
        ("\ud800x\udfff", "x\ud800\udfff", 2),
        ("\x00\x00a", "a\x00", 1),
        ("\x00a\x00", "a\x00", 2),
    ],
)
def test_hostile_and_edge_cases(first: str, second: str, length: int) -> None:
    assert lcs_length(first, second) == length
    _check(first, second)


def test_long_and_repetitive_strings() -> None:
    rng = random.Random(5)
    words = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(50_000))
    other = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(50_000))
    _check(words, other)
    _check("a" * 50_000, "a" * 49_999 + "b")
    _check("ab" * 25_000, "ba" * 25_000)
    _check("x" * 50_000, "y" * 50_000)
    _check(words, words[::-1])
    _check(words, "short")
    # every character distinct: one mask per character, 20k entries
    distinct = "".join(map(chr, range(0x3400, 0x3400 + 20_000)))
    _check(distinct, distinct[::2] + distinct[1::2])


def test_the_scorer_runs_without_rapidfuzz() -> None:
    # the core install has no RapidFuzz: block its import and score for real in a fresh process
    code = (
        "import sys; sys.modules['rapidfuzz'] = None\n"
        "from assay.scorers._lib.textdiff import text_difference\n"
        "print(text_difference('The quick brown fox', 'The quick brown cat').ratio)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 16 * 2 / 38
