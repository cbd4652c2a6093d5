"""Per-prediction metrics of generated text: exact_match, the sacrebleu corpus metrics' items,
ROUGE, bypass.

Calling convention (lm-eval v0.5): ``fn(references, predictions, **kwargs)`` where
``predictions`` is the list of a doc's predictions (one per repeat) and ``references`` the
doc's gold: one string (compared with every prediction), a list of strings as long as the
predictions (pairwise), or, with ``multiple_targets``, the list of acceptable golds. Each
returns one value per prediction, or ``{name: [one value per prediction]}``.

``exact_match`` normalises both sides in lm-eval's order (A.4.2): each regex of
``regexes_to_ignore`` removed in list order, lowercasing, ASCII punctuation removed, digits
removed, then equality.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import eq
from typing import Any

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DIGITS = str.maketrans("", "", string.digits)


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _normalizer(
    regexes_to_ignore: Sequence[str] | None,
    ignore_case: bool,
    ignore_punctuation: bool,
    ignore_numbers: bool,
) -> Callable[[Any], str] | None:
    """The normalisation exact_match applies, or ``None`` when no option is set (values are
    then compared as they are)."""
    if not (regexes_to_ignore or ignore_case or ignore_punctuation or ignore_numbers):
        return None
    patterns = [re.compile(p) for p in regexes_to_ignore or ()]

    def normalize(text: Any) -> str:
        out = str(text)
        for pattern in patterns:
            out = pattern.sub("", out)
        if ignore_case:
            out = out.lower()
        if ignore_punctuation:
            out = out.translate(_PUNCTUATION)
        if ignore_numbers:
            out = out.translate(_DIGITS)
        return out

    return normalize


def normalize_for_match(
    text: Any,
    *,
    regexes_to_ignore: Sequence[str] | None = None,
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
    ignore_numbers: bool = False,
) -> Any:
    """``text`` as exact_match compares it (unchanged when no option is set)."""
    normalize = _normalizer(regexes_to_ignore, ignore_case, ignore_punctuation, ignore_numbers)
    return text if normalize is None else normalize(text)


def _pairwise_refs(references: Any, n: int, metric: str) -> list[Any]:
    if not _is_list(references):
        return [references] * n
    refs = list(references)
    if len(refs) == n:
        return refs
    if len(refs) == 1:
        return refs * n
    raise ValueError(f"{metric}: {len(refs)} references for {n} predictions")


def exact_match(
    references: Any,
    predictions: Sequence[Any],
    multiple_targets: bool = False,
    regexes_to_ignore: Sequence[str] | None = None,
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
    ignore_numbers: bool = False,
) -> dict[str, list[int]]:
    """``{"exact_match": [0/1 per prediction]}``; with ``multiple_targets`` a prediction
    scores 1 when it matches any of the golds."""
    normalize = _normalizer(regexes_to_ignore, ignore_case, ignore_punctuation, ignore_numbers)
    preds = list(predictions) if normalize is None else [normalize(p) for p in predictions]
    if multiple_targets:
        targets = references
        if _is_list(references) and references and _is_list(references[0]):
            targets = references[0]
        candidates = targets if _is_list(targets) else [targets]
        golds = list(candidates) if normalize is None else [normalize(t) for t in candidates]
        return {"exact_match": [int(p in golds) for p in preds]}
    paired = _pairwise_refs(references, len(preds), "exact_match")
    refs = paired if normalize is None else [normalize(r) for r in paired]
    return {"exact_match": list(map(int, map(eq, preds, refs)))}  # same lengths: paired


def corpus_item(references: Any, predictions: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The per-doc item of a sacrebleu corpus metric: ``(references, prediction)`` per
    prediction; the work happens in the aggregation."""
    return [(references, p) for p in predictions]


def bypass(references: Any = None, predictions: Sequence[Any] = (), **_: Any) -> list[None]:
    """No value: for tasks that only generate and log (the aggregation reports 999)."""
    return [None] * max(1, len(predictions))


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@lru_cache(maxsize=8)
def _rouge_scorer(types: tuple[str, ...], use_stemmer: bool) -> Any:
    from rouge_score import rouge_scorer  # type: ignore[import-untyped]

    return rouge_scorer.RougeScorer(list(types), use_stemmer=use_stemmer)


def rouge(
    references: Any,
    predictions: Sequence[Any],
    rouge_types: Sequence[str] = ROUGE_TYPES,
    use_stemmer: bool = False,
    multiple_targets: bool = False,
) -> dict[str, list[float]]:
    """ROUGE F-measures (``rouge-score``) per prediction, one key per ROUGE type; with
    several references (``multiple_targets``) the best reference counts."""
    scorer = _rouge_scorer(tuple(rouge_types), use_stemmer)
    out: dict[str, list[float]] = {t: [] for t in rouge_types}
    if multiple_targets:
        targets = list(references) if _is_list(references) else [references]
        refs_per_pred = [targets] * len(predictions)
    else:
        refs_per_pred = [[r] for r in _pairwise_refs(references, len(predictions), "rouge")]
    for pred, refs in zip(predictions, refs_per_pred, strict=True):
        scores = [scorer.score(str(ref), str(pred)) for ref in refs]
        for t in rouge_types:
            out[t].append(max(s[t].fmeasure for s in scores))
    return out
