"""Aggregations: how a run turns one scorer's per-item results into run-level numbers.

A scorer (type) declares its aggregations by name (``register_scorer(aggregations=...)``,
``Scorer(aggregations=...)``, default ``("mean",)``); the run summary reports each under
``ScorerSummary.aggregates``. Three kinds:

* ``items`` — a function of the per-item means (repeats averaged first): ``mean``,
  ``median``;
* ``corpus`` — a function of the items' corpus payloads (``ScoreResult.corpus``), for
  numbers that are statistics of the whole corpus (BLEU, chrF, TER, a corpus F1: not a mean
  of per-item values). With repeats it is computed per repeat and the repeats averaged;
* ``repeats`` — ``pass@k`` (any k): the unbiased estimator of Chen et al. (2021),
  ``1 - C(n-c, k) / C(n, k)`` per item over its ``n`` ready repeats of which ``c`` are
  correct, averaged over the items with ``n >= k``. A repeat is correct when it passes the
  scorer's effective threshold, or, without one, when it reaches the best end of the range.

Register your own with ``register_aggregation(name, fn, kind=...)`` (a corpus function is a
``Callable[[list[Any]], float]``) and name it in the scorer's aggregations. Summaries never
fail on an aggregation: an unknown name (a run recorded in another process) or a function
that raises gives ``None`` for that aggregate (logged).
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

log = logging.getLogger(__name__)

AggregationKind = Literal["items", "corpus", "repeats"]
CorpusFunction = Callable[[list[Any]], float]

if TYPE_CHECKING:  # numpy is imported when an aggregation runs: a run checks names at start
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]
    ItemsFunction = Callable[[FloatArray], float]
    RepeatsFunction = Callable[[IntArray, IntArray], float]


class UnknownAggregationError(KeyError):
    """No aggregation of that name."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, slots=True)
class Aggregation:
    """A named aggregation. ``fn`` takes, by ``kind``: the per-item means (``items``), the
    corpus payloads in item order (``corpus``), or per-item ready-repeat counts ``n`` and
    correct counts ``c`` (``repeats``)."""

    name: str
    kind: AggregationKind
    fn: Callable[..., float]
    description: str = ""


_AGGREGATIONS: dict[str, Aggregation] = {}
_PASS_AT = re.compile(r"pass@([1-9][0-9]*)")


def register_aggregation(
    name: str,
    fn: Callable[..., float],
    *,
    kind: AggregationKind = "items",
    description: str = "",
    replace: bool = False,
) -> Aggregation:
    """Add an aggregation; registering an existing name raises unless ``replace``."""
    if not name or _PASS_AT.fullmatch(name):
        raise ValueError(f"aggregation name {name!r} is empty or reserved (pass@k is built in)")
    if name in _AGGREGATIONS and not replace:
        raise ValueError(f"aggregation {name!r} is already registered")
    aggregation = Aggregation(name, kind, fn, description)
    _AGGREGATIONS[name] = aggregation
    return aggregation


def corpus_aggregation(
    name: str, *, description: str = "", replace: bool = False
) -> Callable[[CorpusFunction], CorpusFunction]:
    """Decorator registering ``fn(payloads) -> float`` as a corpus aggregation."""

    def decorate(fn: CorpusFunction) -> CorpusFunction:
        register_aggregation(name, fn, kind="corpus", description=description, replace=replace)
        return fn

    return decorate


def unregister_aggregation(name: str) -> None:
    _AGGREGATIONS.pop(name, None)


def get_aggregation(name: str) -> Aggregation:
    """The aggregation named ``name`` (``pass@k`` for any k >= 1); unknown names raise
    ``UnknownAggregationError`` with a "did you mean"."""
    found = _AGGREGATIONS.get(name)
    if found is not None:
        return found
    match = _PASS_AT.fullmatch(name)
    if match:
        k = int(match.group(1))
        return Aggregation(
            name, "repeats", lambda n, c: pass_at_k(n, c, k), f"pass@{k} over repeats"
        )
    close = difflib.get_close_matches(name, [*_AGGREGATIONS, "pass@1"], n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    known = ", ".join([*sorted(_AGGREGATIONS), "pass@k"])
    raise UnknownAggregationError(f"unknown aggregation {name!r}{hint} (known: {known})")


def check_aggregations(names: Iterable[str]) -> None:
    """Raise ``UnknownAggregationError`` for the first name that is not registered."""
    for name in names:
        get_aggregation(name)


def list_aggregations() -> list[Aggregation]:
    return [_AGGREGATIONS[name] for name in sorted(_AGGREGATIONS)]


def has_corpus_aggregation(names: Iterable[str]) -> bool:
    """Whether any of ``names`` is a known corpus aggregation (unknown names: no)."""
    return any(a is not None and a.kind == "corpus" for a in map(_AGGREGATIONS.get, names))


# ----------------------------------------------------------------------- built-ins


def pass_at_k(n: IntArray | Sequence[int], c: IntArray | Sequence[int], k: int) -> float:
    """Mean over items with ``n >= k`` of ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021),
    computed as ``1 - prod(1 - k / arange(n-c+1, n+1))`` for numerical stability; NaN when
    no item has ``k`` ready repeats."""
    import numpy as np

    if k < 1:
        raise ValueError(f"pass@k needs k >= 1 (got {k})")
    estimates = [
        1.0 if ni - ci < k else 1.0 - float(np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1)))
        for ni, ci in zip((int(x) for x in n), (int(x) for x in c), strict=True)
        if ni >= k
    ]
    return float(np.mean(estimates)) if estimates else math.nan


def _exact_mean(means: FloatArray | Sequence[float]) -> float:
    import numpy as np

    from assay.summary.exact import exact_mean

    mean = exact_mean(np.asarray(means, dtype=np.float64))
    return math.nan if mean is None else mean


MEAN = register_aggregation("mean", _exact_mean, description="mean of per-item means")
"""The built-in ``mean``: the summary's own mean (exact sum, rounded once), so a streamed
summary reports it without holding every item mean."""


def _median(means: FloatArray | Sequence[float]) -> float:
    import numpy as np

    return float(np.median(means))


register_aggregation("median", _median, description="median of per-item means")


def run_aggregation(aggregation: Aggregation, *args: Any) -> float | None:
    """Call ``aggregation`` on its inputs; ``None`` (logged) when it raises or is not a
    finite number, so a broken aggregation never loses a run's summary."""
    try:
        value = float(aggregation.fn(*args))
    except Exception as exc:
        log.warning("aggregation %r failed: %s: %s", aggregation.name, type(exc).__name__, exc)
        return None
    return value if math.isfinite(value) else None
