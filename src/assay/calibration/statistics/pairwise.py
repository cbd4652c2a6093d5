"""Pairwise calibration: which of two outputs is better, judged in both orders.

Verdicts are ``"A"`` (the first output of the pair as the humans saw it), ``"B"`` or
``"tie"``. ``scores`` holds one verdict per pair (judged once) or two: the verdict with
the outputs in their original order and the verdict with them swapped, the latter
already mapped back to the original names (a judge that preferred the first position
after the swap preferred ``"B"``). A pair whose two verdicts differ is position-biased
and counts as a tie, as in MT-Bench's swap check (Zheng et al. 2023).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assay.calibration.statistics.resample import FloatArray, IntArray, StatGroup

VERDICTS = ("A", "B", "tie")

PAIRWISE_STATISTICS: dict[str, str] = {
    "agreement": "no pairs",
    "tie_rate": "no pairs",
    "position_bias_rate": "each pair was judged in one order only",
}


def verdict_codes(values: Sequence[object], field: str) -> IntArray:
    """Verdicts as codes 0 (A), 1 (B), 2 (tie); anything else raises naming the row.

    Case and surrounding spaces are ignored. Distinct spellings are looked up once, so
    100,000 verdicts cost one pass over the strings."""
    if len(values) == 0:
        return np.empty(0, dtype=np.int64)
    lookup = {name.lower(): code for code, name in enumerate(VERDICTS)}
    texts = np.array([v if isinstance(v, str) else "\x00" for v in values], dtype=str)
    spellings, inverse = np.unique(texts, return_inverse=True)
    codes_of = np.empty(spellings.shape[0], dtype=np.int64)
    for k, spelling in enumerate(spellings):
        code = lookup.get(str(spelling).strip().lower())
        if code is None:
            i = int(np.flatnonzero(inverse == k)[0])
            raise ValueError(
                f"{field}[{i}] is {values[i]!r}; a pairwise verdict is 'A', 'B' or 'tie'"
            )
        codes_of[k] = code
    codes: IntArray = codes_of[inverse.ravel()]
    return codes


def final_verdicts(first: IntArray, second: IntArray | None) -> tuple[IntArray, IntArray]:
    """The pair's verdict (a tie where the two orders disagree) and the biased pairs (0/1)."""
    if second is None:
        return first, np.zeros_like(first)
    biased = (first != second).astype(np.int64)
    return np.where(biased == 1, 2, first), biased


def pairwise_group(
    human: IntArray, verdict: IntArray, biased: IntArray, swapped: bool
) -> StatGroup:
    """Agreement with the humans, tie rate and position-bias rate as weighted means."""
    columns = [human == verdict, verdict == 2]
    if swapped:
        columns.append(biased == 1)
    features = np.column_stack(columns).astype(np.float64)
    names = ["agreement", "tie_rate", "position_bias_rate"][: features.shape[1]]

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        means = (weights @ features) / weights.sum(axis=1)[:, None]
        return {name: means[:, j] for j, name in enumerate(names)}

    return group
