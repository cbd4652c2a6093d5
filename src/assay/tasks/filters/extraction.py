"""Extraction filters: pull the answer out of free text (``regex``, ``regex_pos``,
``remove_whitespace``).

``regex`` follows lm-eval exactly, because gsm8k-style scores depend on each detail:
``findall`` over the response (a non-string counts as ``""``); ``group_select`` indexes the
list of *matches*, not the capture groups (``-1`` is the last match); a match with several
groups gives its first non-empty group; the result is stripped; no match gives the
fallback. One PR behaviour is taken over on purpose (lm-eval PR #3997): a ``group_select``
outside the matches gives the fallback where 0.4.13 raises ``IndexError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import PrivateAttr, StrictInt, StrictStr, field_validator

from assay.patterns import PatternError, compile_user_pattern
from assay.tasks.filters.base import (
    FilterError,
    FilterParams,
    describe,
    require_text,
    responses_of,
)
from assay.tasks.filters.registry import register_filter

GSM8K_ANSWER = r"#### (\-?[0-9\.\,]+)"
"""lm-eval's default ``regex_pattern`` (the gsm8k answer line)."""

INVALID = "[invalid]"
"""lm-eval's default fallback: what an unparseable response becomes (and scores as)."""


def compile_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` compiled, or a ``ValueError`` saying why it is not a valid regex."""
    try:
        return compile_user_pattern(pattern, flags)
    except PatternError as exc:
        raise ValueError(f"{pattern[:80]!r} is not a valid regular expression ({exc})") from None


def select_match(matches: list[Any], group_select: int) -> Any | None:
    """The ``group_select``-th element of a ``findall`` result, ``None`` when out of range."""
    if not -len(matches) <= group_select < len(matches):
        return None
    return matches[group_select]


def text_of(resp: object) -> str:
    """A response as text for matching: lm-eval treats a non-string as ``""``."""
    return resp if isinstance(resp, str) else ""


class RegexParams(FilterParams):
    """The kwargs ``regex`` and the multiple-choice filters share."""

    regex_pattern: StrictStr = GSM8K_ANSWER
    group_select: StrictInt = 0
    fallback: StrictStr = INVALID
    _regex: re.Pattern[str] = PrivateAttr()

    @field_validator("regex_pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str) -> str:
        compile_pattern(pattern)
        return pattern

    def model_post_init(self, context: Any, /) -> None:
        self._regex = compile_pattern(self.regex_pattern)


@register_filter("regex")
class RegexFilter(RegexParams):
    """Extract the ``group_select``-th match of ``regex_pattern`` from each response."""

    def extract(self, resp: object) -> str:
        """One response's extracted answer (or the fallback)."""
        match = select_match(self._regex.findall(text_of(resp)), self.group_select)
        if match is None:
            return self.fallback
        if isinstance(match, tuple):
            # several groups: the first non-empty one; lm-eval strips the fallback too here
            match = next((group for group in match if group), self.fallback)
        return str(match).strip()

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [
            [self.extract(resp) for resp in responses_of(entry, "regex", i)]
            for i, entry in enumerate(resps)
        ]


TAGGED_TOKEN = re.compile(r"\('([^']*)', '([^']*)'\)")
"""One ``('token', 'TAG')`` pair in a printed list of tagged tokens."""


@register_filter("regex_pos")
class PosTagsFilter(FilterParams):
    """Parse ``[('tok', 'TAG'), ...]`` text into its list of tags (or the fallback)."""

    regex_pattern: StrictStr = r"\['(.*?)'\]"
    """Accepted and checked for lm-eval compatibility; lm-eval does not use it either."""
    group_select: StrictInt = 0
    """Accepted for lm-eval compatibility; unused."""
    fallback: Any = None
    """What a response without tagged tokens becomes; ``None`` means ``["invalid"]``."""

    @field_validator("regex_pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str) -> str:
        compile_pattern(pattern)
        return pattern

    def tags(self, resp: object, where: str) -> Any:
        """One response's tags: parsed from text, or read from ``(token, tag)`` pairs."""
        if isinstance(resp, str):
            tags = [tag for _, tag in TAGGED_TOKEN.findall(resp)]
        else:
            try:
                tags = [tag for _, tag in resp]  # type: ignore[attr-defined]
            except (TypeError, ValueError) as exc:
                raise FilterError(
                    f"regex_pos: {where} is {describe(resp)}, neither text nor (token, tag) pairs"
                ) from exc
        if tags:
            return tags
        fallback = ["invalid"] if self.fallback is None else self.fallback
        return list(fallback) if isinstance(fallback, list) else fallback

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [
            [
                self.tags(resp, f"doc {i} response {j}")
                for j, resp in enumerate(responses_of(entry, "regex_pos", i))
            ]
            for i, entry in enumerate(resps)
        ]


@register_filter("remove_whitespace")
class RemoveWhitespace(FilterParams):
    """Strip whitespace at both ends of each response."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [
            [
                require_text("remove_whitespace", resp, i, j).strip()
                for j, resp in enumerate(responses_of(entry, "remove_whitespace", i))
            ]
            for i, entry in enumerate(resps)
        ]
