"""Aggregations of per-doc metric values into a task's number, as lm-evaluation-harness 0.4.13
computes them.

Each function takes the per-doc values in doc order and returns one float. Most metrics
are means; the corpus statistics (BLEU, chrF, TER, F1, MCC, perplexity) are functions of
the whole corpus, which is why lm-eval keeps their per-doc values as raw pairs and does the
work here. Where lm-eval would crash with an obscure error or silently truncate (ragged
reference lists, multi-class F1, out-of-range gold in the Brier score), these raise a
``ValueError`` that says what is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sacrebleu


def _require_items(items: Sequence[Any], what: str) -> None:
    if len(items) == 0:
        raise ValueError(f"the {what} aggregation needs at least one per-doc value (got none)")


def bypass(items: list[Any]) -> float:
    """The fixed placeholder 999 of "generate and log only" tasks."""
    return 999


def mean(items: list[Any]) -> float:
    """``sum / n`` (Python's left-to-right sum, as lm-eval)."""
    _require_items(items, "mean")
    try:
        return float(sum(items) / len(items))
    except TypeError as exc:
        raise ValueError(
            f"the mean aggregation needs numbers; got {items[0]!r}. Per-doc values such as "
            "(gold, lls) pairs need a custom aggregation"
        ) from exc


def nanmean(items: list[Any]) -> float:
    """numpy's nanmean; NaN when there are no items or all are NaN (lm-eval's rule)."""
    if len(items) == 0 or all(np.isnan(items)):
        return math.nan
    return float(np.nanmean(items))


def median(items: list[Any]) -> Any:
    """The upper median: the middle element of the sorted items (lm-eval's definition, not
    the average of the two middle ones)."""
    _require_items(items, "median")
    return sorted(items)[len(items) // 2]


def perplexity(items: list[Any]) -> float:
    """``exp(-mean(ll))`` over documents (per document, not per token)."""
    return math.exp(-mean(items))


def _weighted_mean(items: list[Any]) -> float:
    _require_items(items, "weighted")
    numerators, denominators = zip(*items, strict=True)
    total = sum(denominators)
    if total == 0:
        raise ValueError("the weighted aggregation's weights (words or bytes) sum to 0")
    return float(sum(numerators) / total)


def weighted_perplexity(items: list[Any]) -> float:
    """``exp(-Σll / Σweight)`` over (ll, words-or-bytes) pairs."""
    return math.exp(-_weighted_mean(items))


def bits_per_byte(items: list[Any]) -> float:
    """``-Σll / Σbytes / ln 2`` over (ll, bytes) pairs."""
    return -_weighted_mean(items) / math.log(2)


def _pairs(items: list[Any], what: str) -> tuple[list[Any], list[Any]]:
    _require_items(items, what)
    try:
        firsts, seconds = zip(*items, strict=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"the {what} aggregation needs (gold, prediction) pairs per doc; got {items[0]!r}"
        ) from exc
    return list(firsts), list(seconds)


def f1(items: list[Any]) -> float:
    """scikit-learn's ``f1_score(golds, preds)`` with its default ``average='binary'``
    (positive label 1), as lm-eval. Multi-class labels raise: pick an average with a
    custom aggregation instead."""
    from sklearn.metrics import f1_score  # type: ignore[import-untyped]

    golds, preds = _pairs(items, "f1")
    try:
        return float(np.max(f1_score(golds, preds)))
    except ValueError as exc:
        labels = sorted({*map(_label, golds), *map(_label, preds)})
        raise ValueError(
            "the f1 aggregation is binary F1 with positive label 1 (lm-eval's default); "
            f"these docs have labels {labels} ({exc}). For multi-class F1 give the metric a "
            "custom aggregation calling sklearn's f1_score with average='micro' or 'macro'"
        ) from exc


def _label(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def matthews_corrcoef(items: list[Any]) -> float:
    """scikit-learn's Matthews correlation of the (gold, prediction) pairs."""
    from sklearn.metrics import matthews_corrcoef as sk_mcc

    golds, preds = _pairs(items, "matthews_corrcoef")
    return float(sk_mcc(golds, preds))


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


def sacreformat(refs: Sequence[Any], preds: Sequence[Any]) -> tuple[list[list[str]], list[str]]:
    """Reshape per-doc references and predictions for sacrebleu's corpus functions.

    sacrebleu wants one list per reference *stream* (the i-th reference of every doc), so
    the per-doc reference lists are transposed; a doc's single reference string counts as a
    one-element list; a prediction given as a one-element list is unwrapped. Unlike
    lm-eval (whose ``zip`` silently drops the extra references), docs with different
    numbers of references raise.
    """
    if len(refs) == 0:
        raise ValueError("sacrebleu aggregations need at least one doc (got none)")
    per_doc = [list(ref) if _is_sequence(ref) else [ref] for ref in refs]
    counts = {len(doc_refs) for doc_refs in per_doc}
    if len(counts) != 1:
        raise ValueError(
            "every doc must have the same number of references for sacrebleu's corpus "
            f"statistics; these docs have {sorted(counts)} references"
        )
    streams = [list(stream) for stream in zip(*per_doc, strict=True)]
    flat: list[str] = []
    for i, pred in enumerate(preds):
        if _is_sequence(pred):
            if len(pred) != 1:
                raise ValueError(f"doc {i}: a prediction must be a string, got {pred!r}")
            pred = pred[0]
        flat.append(pred)
    return streams, flat


def _corpus_inputs(items: list[Any], what: str) -> tuple[list[str], list[list[str]]]:
    refs, preds = _pairs(items, what)
    streams, flat = sacreformat(refs, preds)
    return flat, streams


def bleu(items: list[Any]) -> float:
    """sacrebleu ``corpus_bleu`` with its defaults (13a tokenizer, exp smoothing) over
    (references, prediction) pairs."""
    preds, streams = _corpus_inputs(items, "bleu")
    return float(sacrebleu.corpus_bleu(preds, streams).score)


def chrf(items: list[Any]) -> float:
    """Plain chrF: sacrebleu ``corpus_chrf`` with its defaults (char order 6, word order 0,
    beta 2)."""
    preds, streams = _corpus_inputs(items, "chrf")
    return float(sacrebleu.corpus_chrf(preds, streams).score)


def chrf_plus_plus(items: list[Any]) -> float:
    """chrF++: ``corpus_chrf`` with word order 2 (lm-eval 0.4.13, PR #3780)."""
    preds, streams = _corpus_inputs(items, "chrf++")
    return float(sacrebleu.corpus_chrf(preds, streams, word_order=2).score)


def ter(items: list[Any]) -> float:
    """sacrebleu ``corpus_ter`` with its defaults (an error rate: lower is better)."""
    preds, streams = _corpus_inputs(items, "ter")
    return float(sacrebleu.corpus_ter(preds, streams).score)


def brier_score(items: list[Any]) -> float:
    """Mean over docs of ``Σ_classes (p - onehot(gold))²`` over (gold, probabilities) pairs."""
    golds, probabilities = _pairs(items, "brier_score")
    widths = {len(p) for p in probabilities}
    if len(widths) != 1:
        raise ValueError(
            "the brier_score aggregation needs the same number of choices in every doc; "
            f"got {sorted(widths)}"
        )
    probs = np.asarray(probabilities, dtype=np.float64)
    num_class = probs.shape[1]
    for i, gold in enumerate(golds):
        if isinstance(gold, bool) or not isinstance(gold, int | np.integer):
            raise ValueError(f"doc {i}: brier_score needs one gold index, got {gold!r}")
        if not 0 <= gold < num_class:
            raise ValueError(
                f"doc {i}: gold index {gold} is not one of the {num_class} choices "
                "(-100 marks a gold that was not found among the choices)"
            )
    one_hot = np.eye(num_class)[list(golds)]
    return float(np.mean(np.sum((probs - one_hot) ** 2, axis=1)))


def acc_all(items: list[Any]) -> float:
    """MultiRC-style accuracy over (prediction, doc) pairs: a question counts as correct only
    when every one of its answers is; docs carry ``idx.paragraph``, ``idx.question`` and
    ``label``."""
    return float(np.mean([int(all(v)) for v in _question_groups(items, by_paragraph=True)]))


def _question_groups(items: list[Any], *, by_paragraph: bool) -> list[list[bool]]:
    groups: dict[Any, list[bool]] = {}
    for i, (pred, doc) in enumerate(items):
        try:
            idx = doc["idx"]
            key = (idx["paragraph"], idx["question"]) if by_paragraph else idx["question"]
            gold = doc["label"] == 1
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"item {i}: acc_all needs docs with idx.paragraph, idx.question and label"
            ) from exc
        groups.setdefault(key, []).append(gold == pred)
    return list(groups.values())


def question_groups(items: list[Any], *, by_paragraph: bool) -> list[list[bool]]:
    """The per-question correctness lists ``acc_all`` and its stderr are built from."""
    return _question_groups(items, by_paragraph=by_paragraph)
