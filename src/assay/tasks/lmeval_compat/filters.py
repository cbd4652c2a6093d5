"""``lm_eval.filters.*`` for task code: lm-eval's filter classes with their constructor
signatures and attributes (``RegexFilter.regex``, ``.group_select``, ``.fallback``), so task
code that subclasses them (most of the catalogue's custom filters extend ``RegexFilter``) or
builds them directly works unchanged.

``RegexFilter.apply`` reads ``self.regex`` at call time, because subclasses replace it (a
case-insensitive pattern, say) after ``super().__init__``; the other classes hand their
kwargs to the assay built-in of the same name, so the semantics are assay's (which are
lm-eval's, see ``assay.tasks.filters``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from assay.tasks.filters.extraction import GSM8K_ANSWER, INVALID, select_match, text_of
from assay.tasks.filters.registry import build_filter
from assay.tasks.lmeval_compat.api import Filter


class RegexFilter(Filter):
    """Extract the ``group_select``-th match of ``regex_pattern`` from each response."""

    def __init__(
        self,
        regex_pattern: str = GSM8K_ANSWER,
        group_select: int = 0,
        fallback: str = INVALID,
    ) -> None:
        self.regex_pattern = regex_pattern
        self.regex = re.compile(regex_pattern)
        self.group_select = group_select
        self.fallback = fallback

    def extract(self, resp: object) -> str:
        """One response's answer (or the fallback)."""
        match = select_match(self.regex.findall(text_of(resp)), self.group_select)
        if match is None:
            return self.fallback
        if isinstance(match, tuple):
            match = next((group for group in match if group), self.fallback)
        return str(match).strip()

    def apply(self, resps: Iterable[Sequence[Any]], docs: Sequence[dict[str, Any]]) -> list[Any]:
        return [[self.extract(resp) for resp in entry] for entry in resps]


class _Delegating(Filter):
    """A class standing for an assay built-in filter: kwargs kept, ``apply`` delegated."""

    name = ""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self._built = build_filter(self.name, kwargs)  # bad kwargs fail here, as in lm-eval

    def apply(self, resps: Iterable[Any], docs: Sequence[dict[str, Any]]) -> list[Any]:
        return list(self._built.apply(list(resps), docs))


class MultiChoiceRegexFilter(RegexFilter):
    """Letter answers of multiple-choice questions (``multi_choice_regex``)."""

    def __init__(
        self,
        regex_pattern: str = GSM8K_ANSWER,
        group_select: int = 0,
        fallback: str = INVALID,
        ignore_case: bool = False,
        ignore_punctuation: bool = False,
        regexes_to_ignore: list[str] | None = None,
    ) -> None:
        super().__init__(regex_pattern, group_select, fallback)
        self.ignore_case = ignore_case
        self.ignore_punctuation = ignore_punctuation
        self.regexes_to_ignore = regexes_to_ignore
        self._built = build_filter(
            "multi_choice_regex",
            {
                "regex_pattern": regex_pattern,
                "group_select": group_select,
                "fallback": fallback,
                "ignore_case": ignore_case,
                "ignore_punctuation": ignore_punctuation,
                "regexes_to_ignore": regexes_to_ignore,
            },
        )

    def apply(self, resps: Iterable[Sequence[Any]], docs: Sequence[dict[str, Any]]) -> list[Any]:
        return list(self._built.apply(list(resps), docs))


class POSFilter(_Delegating):
    """Part-of-speech tags from ``[('tok', 'TAG'), ...]`` text (``regex_pos``)."""

    name = "regex_pos"


class WhitespaceFilter(_Delegating):
    """Strip whitespace at both ends (``remove_whitespace``)."""

    name = "remove_whitespace"


class TakeFirstFilter(_Delegating):
    """Keep each doc's first response (``take_first``)."""

    name = "take_first"


class TakeKFilter(_Delegating):
    """Keep each doc's first ``k`` responses (``take_first_k``)."""

    name = "take_first_k"


class MajorityVoteFilter(_Delegating):
    """Each doc's most common response (``majority_vote``)."""

    name = "majority_vote"


class LowercaseFilter(_Delegating):
    """Lowercase each response (``lowercase``)."""

    name = "lowercase"


class UppercaseFilter(_Delegating):
    """Uppercase each response (``uppercase``)."""

    name = "uppercase"


class MapFilter(_Delegating):
    """Map each response through ``mapping_dict`` (``map``)."""

    name = "map"


class SPANFilter(_Delegating):
    """NER spans normalised (``format_span``)."""

    name = "format_span"


class CustomFilter(_Delegating):
    """``filter_fn(resps, docs)`` (``custom``)."""

    name = "custom"
