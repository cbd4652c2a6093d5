"""What a score step may return: a plain number, or a ``Score`` with more than one number.

A plain number stays the common case. A scorer that produces several numbers per item
(rouge1/rouge2/rougeL, precision/recall/f1, per-dimension scores) returns
``Score(value, values={...})``: ``value`` is the headline score (what means, pass rates and
comparisons use), ``values`` are reported and summarised next to it. A scorer whose
run-level number is a corpus statistic (BLEU, chrF, TER, a corpus F1) also returns
``corpus=``: JSON-shaped per-item data (a (prediction, references) pair, or sufficient
statistics) that the scorer's corpus aggregation combines over all items.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any


@dataclass(frozen=True, slots=True)
class Score:
    """A score step's result: the headline ``value``, named extra ``values``, and an
    optional per-item ``corpus`` payload for corpus-level aggregation."""

    value: float
    values: Mapping[str, float] = field(default_factory=dict)
    corpus: Any = None


@dataclass(frozen=True, slots=True)
class CheckedScore:
    """A validated score step result, as the pipeline stores it."""

    value: float
    values: dict[str, float]
    corpus: Any


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"the score step returned {what}{value!r}; expected a finite number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"the score step returned {what}{number}; expected a finite number")
    return number


def check_score(value: Any) -> CheckedScore:
    """Validate a score step's result: a finite real number (bools are rejected) or a
    ``Score`` whose value and values are finite numbers, whose value names are non-empty
    strings and whose corpus payload is JSON-serialisable (it is stored as JSON)."""
    if type(value) is float and math.isfinite(value):  # the common case, checked cheaply
        return CheckedScore(value, {}, None)
    if not isinstance(value, Score):
        return CheckedScore(_finite(value, ""), {}, None)
    values: dict[str, float] = {}
    for key, number in value.values.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"the score step returned a value named {key!r}; names are strings")
        values[key] = _finite(number, f"value {key!r} = ")
    if value.corpus is not None:
        try:
            json.dumps(value.corpus, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"the score step's corpus payload is not JSON-serialisable ({exc}); use "
                "lists, dicts, strings and finite numbers"
            ) from None
    return CheckedScore(_finite(value.value, "Score.value "), values, value.corpus)
