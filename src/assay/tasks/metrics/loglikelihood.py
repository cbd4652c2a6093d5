"""Per-doc metrics over loglikelihoods (multiple choice and single continuations).

These are lm-eval v0.5's loglikelihood metrics (``lm_eval/api/metrics/ll.py``): each takes
the gold (an index, or a list of indices with multiple targets; ``-100`` marks a gold that
was not among the choices) and an ``LLResults`` and returns one number for the doc. The
v0.4 built-in processing (``process.process_multiple_choice``) uses the same helpers, so
both conventions pick the same answer.

Length normalisation divides by the choice's length; an empty choice would divide by zero
and pick an answer by accident (numpy turns it into ±inf or NaN), so it raises instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Gold = int | Sequence[int]
INVALID_GOLD = -100
NAT_TO_BIT = 1.0 / math.log(2.0)


def softmax(values: Sequence[float] | FloatArray) -> FloatArray:
    """Max-subtracted (numerically stable) softmax."""
    x = np.asarray(values, dtype=np.float64)
    e = np.exp(x - np.max(x))
    return np.asarray(e / e.sum(), dtype=np.float64)


def first_argmax(values: Sequence[float] | FloatArray) -> int:
    """The index of the largest value; ties go to the first index (numpy's argmax)."""
    return int(np.argmax(np.asarray(values, dtype=np.float64)))


def _letters(n: int) -> tuple[str, ...]:
    return tuple(chr(ord("A") + i) for i in range(n))


@dataclass(frozen=True)
class LLResults:
    """One doc's loglikelihoods: per choice ``lls`` and greedy flags, the choice texts
    (default ``A, B, …``; only their lengths matter here), and optionally the mutual-
    information scores (conditional minus unconditional loglikelihood, per choice)."""

    lls: tuple[float, ...]
    is_greedy: tuple[bool, ...] = ()
    choices: tuple[str, ...] = ()
    lls_mutual_info: tuple[float, ...] | None = None
    _arrays: dict[str, FloatArray] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.lls)
        if n == 0:
            raise ValueError("LLResults needs at least one loglikelihood")
        object.__setattr__(self, "lls", tuple(float(x) for x in self.lls))
        if not self.is_greedy:
            object.__setattr__(self, "is_greedy", (False,) * n)
        if not self.choices:
            object.__setattr__(self, "choices", _letters(n))
        for name in ("is_greedy", "choices"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"LLResults: {len(getattr(self, name))} {name} for {n} lls")
        mi = self.lls_mutual_info
        if mi is not None and len(mi) != n:
            raise ValueError(f"LLResults: {len(mi)} mutual-information scores for {n} lls")

    @classmethod
    def build(
        cls,
        lls: Sequence[float],
        *,
        is_greedy: Sequence[bool] = (),
        choices: Sequence[str] = (),
        lls_mutual_info: Sequence[float] | None = None,
    ) -> LLResults:
        return cls(
            tuple(lls),
            tuple(bool(g) for g in is_greedy),
            tuple(choices),
            None if lls_mutual_info is None else tuple(float(x) for x in lls_mutual_info),
        )

    def array(self) -> FloatArray:
        return np.asarray(self.lls, dtype=np.float64)

    def char_len(self) -> FloatArray:
        return self._lengths("characters", [len(c) for c in self.choices])

    def byte_len(self) -> FloatArray:
        return self._lengths("UTF-8 bytes", [len(c.encode("utf-8")) for c in self.choices])

    def _lengths(self, unit: str, lengths: list[int]) -> FloatArray:
        for i, length in enumerate(lengths):
            if length == 0:
                raise ValueError(
                    f"choice {i} is empty; length normalisation would divide its "
                    f"loglikelihood by 0 {unit}"
                )
        return np.asarray(lengths, dtype=np.float64)


def golds_of(gold: Any) -> list[int]:
    """The gold indices as a list (a single index becomes a one-element list)."""
    if isinstance(gold, Sequence) and not isinstance(gold, str):
        return [int(g) for g in gold]
    return [int(gold)]


def is_correct(gold: Any, pred: int, *, multiple_targets: bool) -> int:
    """1 when ``pred`` is the gold (any gold with multiple targets); -100 never matches."""
    if multiple_targets:
        return int(any(pred == g for g in golds_of(gold) if g != INVALID_GOLD))
    if isinstance(gold, Sequence) and not isinstance(gold, str):
        raise TypeError("a list of gold indices needs multiple_targets=True")
    return int(pred == int(gold))


def _single_gold(gold: Any, results: LLResults, metric: str) -> int:
    if isinstance(gold, Sequence) and not isinstance(gold, str):
        raise ValueError(f"{metric} needs one gold index, got {list(gold)!r}")
    index = int(gold)
    if not 0 <= index < len(results.lls):
        raise ValueError(
            f"{metric}: gold index {index} is not one of the {len(results.lls)} choices"
        )
    return index


# ----------------------------------------------------------------------------- metrics


def acc(references: Any, predictions: LLResults, multiple_targets: bool = False) -> int:
    """Accuracy: argmax of the loglikelihoods is the gold; for a single loglikelihood, whether
    the continuation is the greedy decode."""
    if len(predictions.lls) == 1:
        return int(predictions.is_greedy[0])
    return is_correct(references, first_argmax(predictions.lls), multiple_targets=multiple_targets)


def acc_norm(references: Any, predictions: LLResults, multiple_targets: bool = False) -> int:
    """Accuracy of the argmax of loglikelihood ÷ the choice's character length."""
    pred = first_argmax(predictions.array() / predictions.char_len())
    return is_correct(references, pred, multiple_targets=multiple_targets)


def acc_bytes(references: Any, predictions: LLResults, multiple_targets: bool = False) -> int:
    """Accuracy of the argmax of loglikelihood ÷ the choice's UTF-8 byte length."""
    pred = first_argmax(predictions.array() / predictions.byte_len())
    return is_correct(references, pred, multiple_targets=multiple_targets)


def acc_mutual_info(references: Any, predictions: LLResults, multiple_targets: bool = False) -> int:
    """Accuracy of the argmax of ll(choice | context) − ll(choice | no context)."""
    if predictions.lls_mutual_info is None:
        raise ValueError("acc_mutual_info needs the unconditional loglikelihoods")
    pred = first_argmax(predictions.lls_mutual_info)
    return is_correct(references, pred, multiple_targets=multiple_targets)


def exact_match_mc(references: Any, predictions: LLResults) -> int:
    """1 when the gold continuation is the greedy decode (any gold with multiple targets)."""
    return int(
        any(predictions.is_greedy[g] if g != INVALID_GOLD else False for g in golds_of(references))
    )


def bpb(references: Any, predictions: LLResults) -> float:
    """Bits per byte of the gold continuation: ``-ll[gold] / bytes[gold] / ln 2``."""
    gold = _single_gold(references, predictions, "bpb")
    return float(-predictions.lls[gold] / predictions.byte_len()[gold] * NAT_TO_BIT)


def logprob(references: Any, predictions: LLResults) -> float:
    """The gold continuation's loglikelihood (nats)."""
    return predictions.lls[_single_gold(references, predictions, "logprob")]


def perplexity_item(references: Any, predictions: LLResults) -> float:
    """The per-doc item of ``perplexity``: the gold's loglikelihood (the only one for a
    single continuation)."""
    if len(predictions.lls) == 1:
        return predictions.lls[0]
    return predictions.lls[_single_gold(references, predictions, "perplexity")]


def choice_logprob(references: Any, predictions: LLResults) -> float:
    """Log-probability of the gold under a softmax over the choices:
    ``ll[gold] − logsumexp(ll)``."""
    gold = _single_gold(references, predictions, "choice_logprob")
    lls = predictions.array()
    return float(lls[gold] - np.logaddexp.reduce(lls))


def choice_logprob_norm(references: Any, predictions: LLResults) -> float:
    """``choice_logprob`` over loglikelihood ÷ byte length (length-normalised)."""
    gold = _single_gold(references, predictions, "choice_logprob_norm")
    weights = predictions.array() / predictions.byte_len()
    return float(weights[gold] - np.logaddexp.reduce(weights))


def choice_prob_norm(references: Any, predictions: LLResults) -> float:
    """``exp(choice_logprob_norm)``: the probability mass on the gold."""
    return math.exp(choice_logprob_norm(references, predictions))


def brier_score(references: Any, predictions: LLResults) -> float:
    """``Σ (softmax(lls) − onehot(gold))²`` for the doc."""
    gold = _single_gold(references, predictions, "brier_score")
    probs = softmax(predictions.lls)
    one_hot = np.zeros_like(probs)
    one_hot[gold] = 1.0
    return float(np.sum((probs - one_hot) ** 2))
