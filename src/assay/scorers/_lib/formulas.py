"""The score formulas judge scorers share, over typed verdicts.

They take the judge's validated answers (lists of pydantic entries) and return an unscaled
value; the judge-scorer framework multiplies by ``scale`` and rounds (see
``judge_scorer.Unrounded`` for the reference's few unrounded branches). Keeping each formula
in one place is what makes "share of yes" mean the same thing in every scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def label_of(entry: Any, field: str) -> Any:
    """``entry.field``; labels that are strings are compared trimmed and lower-cased, which
    is what the label validators (``LOWERED``/``TRIMMED_LOWERED``) already guarantee."""
    value = getattr(entry, field)
    return value.strip().lower() if isinstance(value, str) else value


def count(entries: Sequence[Any], field: str, label: Any) -> int:
    """How many entries have ``field`` equal to ``label``."""
    return sum(1 for entry in entries if label_of(entry, field) == label)


def share(entries: Sequence[Any], field: str, label: Any, *, of: int | None = None) -> float:
    """The share of entries whose ``field`` is ``label``: ``count / of`` (``of`` defaults to
    the number of entries), at most 1; 0 when there is nothing to divide by."""
    total = len(entries) if of is None else of
    return min(1.0, count(entries, field, label) / total) if total else 0.0


def weighted_share(entries: Sequence[Any], field: str, weights: Mapping[Any, float]) -> float:
    """``Σ weight(label) × count(label) / n`` over the labels of ``weights`` (in its order;
    other labels count 0); 0 for no entries. E.g. relevance ``{"yes": 1, "unsure": 0.3}``
    gives ``(#yes + 0.3·#unsure) / n``, summed in that order so the value is the reference's
    to the last bit."""
    if not entries:
        return 0.0
    total = 0.0
    for label, weight in weights.items():
        total += weight * count(entries, field, label)
    return total / len(entries)


def mean_average_precision(relevant: Sequence[bool]) -> float:
    """MAP of relevance flags in rank order: the mean of precision@k over the relevant ranks
    (``[True, False, True]`` → ``(1/1 + 2/3) / 2``); 0 when nothing is relevant."""
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def capped_penalty(n: int, per_item: float, cap: float) -> float:
    """``min(n × per_item, cap)``: a penalty per finding that can only take so much."""
    return min(n * per_item, cap)


def where(entries: Sequence[Any], test: Callable[[Any], bool]) -> list[Any]:
    """The entries that pass ``test`` (for reasons that list what failed)."""
    return [entry for entry in entries if test(entry)]
