"""Length of the longest common subsequence of two strings, bit-parallel.

Why hand-written: this one number is all the ``textual-difference`` scorer needed from
RapidFuzz, and RapidFuzz was 12.3 MB of the 163.6 MB core install (issue 27's goal is
≤ 150 MB). The algorithm is short and well known, and ``rapidfuzz.distance.LCSseq.similarity``
stays in the ``dev`` extra as the independent cross-check of every test run
(``tests/scorers/_lib/test_lcs.py``); the measured speed against it is in
``benchmarks/lcs_speed.py`` and ``benchmarks/HISTORY.md`` ("Issue 27: RapidFuzz out of the
core").

The method is Allison–Dix (1986) in Hyyrö's form (2004): the first string's positions are the
bits of one Python integer; ``masks[c]`` has bit ``i`` set where ``first[i] == c``. One pass
over the second string updates the row vector ``row`` (a set bit is a column where the DP row
did *not* grow) with ``u = row & masks[c]; row = (row + u) | (row - u)``; at the end the LCS
length is the number of cleared bits. Each step is a few big-integer operations on
``len(first)/64`` machine words, so the cost is O(len(second) · len(first) / 64) plus one
Python loop iteration per character of the second string. The shorter string drives the loop
(the LCS is symmetric) and a common prefix and suffix are counted directly, as RapidFuzz does.
"""

from __future__ import annotations


def _common_prefix_length(first: str, second: str) -> int:
    limit = min(len(first), len(second))
    length = 0
    while length < limit and first[length] == second[length]:
        length += 1
    return length


def _common_suffix_length(first: str, second: str) -> int:
    limit = min(len(first), len(second))
    length = 0
    while length < limit and first[-1 - length] == second[-1 - length]:
        length += 1
    return length


def lcs_length(first: str, second: str) -> int:
    """Length of the longest common subsequence of ``first`` and ``second`` (by code point)."""
    prefix = _common_prefix_length(first, second)
    first, second = first[prefix:], second[prefix:]
    suffix = _common_suffix_length(first, second)
    if suffix:
        first, second = first[:-suffix], second[:-suffix]
    if not first or not second:
        return prefix + suffix
    if len(second) > len(first):
        first, second = second, first
    masks: dict[str, int] = {}
    for position, char in enumerate(first):
        masks[char] = masks.get(char, 0) | (1 << position)
    full = (1 << len(first)) - 1
    row = full
    for char in second:
        mask = masks.get(char)
        if mask is None:
            continue
        matched = row & mask
        row = ((row + matched) | (row - matched)) & full
    return prefix + suffix + len(first) - row.bit_count()
