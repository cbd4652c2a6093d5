"""Selection filters: which of a doc's repeats to keep (``take_first``, ``take_first_k``,
``majority_vote``, ``noop``).

These keep lm-eval v0.4's shapes exactly, because the metrics and the following steps
depend on them: ``take_first`` returns the bare first element (a string, not a one-element
list), so a later ``map``/``lowercase`` walks that string's characters (the polemo2 config
relies on it); ``majority_vote`` returns a one-element list and must come before
``take_first``. ``noop`` is v0.5's identity filter that keeps all repeats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, StrictInt

from assay.tasks.filters.base import FilterError, FilterParams, describe
from assay.tasks.filters.registry import register_filter


def _repeats(name: str, index: int, entry: Any) -> Sequence[Any]:
    """A doc's entry as a sequence, or a ``FilterError`` naming the doc."""
    if not isinstance(entry, Sequence):
        raise FilterError(f"{name}: doc {index} holds {describe(entry)}, not a list of responses")
    if len(entry) == 0:
        raise FilterError(f"{name}: doc {index} has no responses")
    return entry


@register_filter("take_first")
class TakeFirst(FilterParams):
    """Keep each doc's first response, as the bare value (v0.4: not a one-element list)."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [_repeats("take_first", i, entry)[0] for i, entry in enumerate(resps)]


@register_filter("take_first_k")
class TakeFirstK(FilterParams):
    """Keep each doc's first ``k`` responses (raise ``repeats`` if a doc has fewer)."""

    k: Annotated[StrictInt, Field(gt=0)]
    """How many repeats to keep. lm-eval checks only the first doc; here every doc is
    checked, so a short doc is an error rather than a silently smaller sample."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for i, entry in enumerate(resps):
            repeats = _repeats("take_first_k", i, entry)
            if len(repeats) < self.k:
                raise FilterError(
                    f"take_first_k: doc {i} has {len(repeats)} responses, fewer than "
                    f"k={self.k}; set the task's repeats to at least {self.k}"
                )
            out.append(repeats[: self.k])
        return out


@register_filter("majority_vote")
class MajorityVote(FilterParams):
    """Replace each doc's responses with a one-element list of the most common one (ties
    go to the one seen first; ``[invalid]`` votes too)."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for i, entry in enumerate(resps):
            repeats = _repeats("majority_vote", i, entry)
            try:
                counts = Counter(repeats)
            except TypeError as exc:
                raise FilterError(
                    f"majority_vote: doc {i} has responses that cannot be counted ({exc})"
                ) from exc
            out.append([counts.most_common(1)[0][0]])
        return out


@register_filter("noop")
class Noop(FilterParams):
    """Keep every response as it is (v0.5's identity filter)."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return list(resps)
