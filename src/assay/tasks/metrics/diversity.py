"""Diversity of a doc's repeated generations (beyond lm-eval): distinct-n, unique share,
self-BLEU.

Each takes the doc's predictions (one per repeat) and returns one value for the doc, as a
one-element list so that the repeat reduction passes it through unchanged. Tokens are
whitespace-separated words; the references are not used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sacrebleu


def _ngrams(text: str, n: int) -> list[tuple[str, ...]]:
    tokens = text.split()
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n_value(predictions: Sequence[Any], n: int) -> float:
    """Distinct n-grams ÷ all n-grams over all the predictions (0.0 when they hold no
    n-gram at all)."""
    if n < 1:
        raise ValueError(f"distinct-n needs n >= 1 (got {n})")
    grams = [g for p in predictions for g in _ngrams(str(p), n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def distinct_1(references: Any, predictions: Sequence[Any]) -> list[float]:
    """Distinct unigrams ÷ unigrams over the doc's repeats."""
    return [distinct_n_value(predictions, 1)]


def distinct_2(references: Any, predictions: Sequence[Any]) -> list[float]:
    """Distinct bigrams ÷ bigrams over the doc's repeats."""
    return [distinct_n_value(predictions, 2)]


def distinct_n(references: Any, predictions: Sequence[Any], n: int = 1) -> list[float]:
    """Distinct n-grams ÷ n-grams over the doc's repeats, for any ``n`` (a kwarg)."""
    return [distinct_n_value(predictions, n)]


def unique_share(references: Any, predictions: Sequence[Any]) -> list[float]:
    """Distinct predictions ÷ predictions (1.0: every repeat differs)."""
    if not predictions:
        raise ValueError("unique_share needs at least one prediction")
    return [len({str(p) for p in predictions}) / len(predictions)]


def self_bleu(references: Any, predictions: Sequence[Any]) -> list[float]:
    """Mean sentence BLEU (sacrebleu) of each repeat against all the other repeats; high
    means the repeats say the same thing. Needs at least two repeats."""
    texts = [str(p) for p in predictions]
    if len(texts) < 2:
        raise ValueError(f"self_bleu needs at least two repeats of a doc (got {len(texts)})")
    scores = [
        sacrebleu.sentence_bleu(text, texts[:i] + texts[i + 1 :]).score
        for i, text in enumerate(texts)
    ]
    return [sum(scores) / len(scores)]
