"""Multiple-choice answer extraction: ``multi_choice_regex`` and PR #3879's
``anchored_multi_choice_regex``.

``multi_choice_regex`` maps a free-text answer to a choice letter ``(A)``, ``(B)``, ... using
the doc's ``choices``, in three steps, each tried only when the one before found nothing:

1. the primary ``regex_pattern``, as ``regex`` applies it (case-sensitive; a match whose
   groups are all empty counts as nothing, lm-eval #3708);
2. a choice's *text* in the response, after ``regexes_to_ignore``, ``ignore_case`` and
   ``ignore_punctuation`` (Unicode category P) are applied to both; the longest choice is
   tried first, so a choice that is a prefix of another cannot shadow it (0.4.13, #3884);
3. ``:`` followed by a bare letter within the number of choices.

Otherwise the response becomes the fallback. Taken from open PRs, as the acceptance cases
require: a ``group_select`` outside the matches counts as nothing (#3997), and a non-string
response is treated as ``""`` in every step (#4033) instead of crashing.

``anchored_multi_choice_regex`` first looks for the answer the model *committed to* after a
sentinel ("the answer is", "therefore", or your own), because the positional
``group_select`` can be gamed by a trailing list of eliminated letters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import PrivateAttr, StrictBool, StrictStr, field_validator

from assay.tasks.filters.base import FilterError, describe, responses_of
from assay.tasks.filters.extraction import RegexParams, compile_pattern, select_match, text_of
from assay.tasks.filters.registry import register_filter


class _PunctuationTable(dict[int, int | None]):
    """``str.translate`` table deleting Unicode punctuation (category P), filled in as
    characters are met: lm-eval scans all 1.1 million code points up front, which costs
    seconds on a busy machine; the result is the same for every character."""

    def __missing__(self, code: int) -> int | None:
        value = None if unicodedata.category(chr(code))[0] == "P" else code
        self[code] = value
        return value


PUNCTUATION = _PunctuationTable()


def strip_punctuation(text: str) -> str:
    """``text`` without its Unicode punctuation characters."""
    return text.translate(PUNCTUATION)


@dataclass(frozen=True, slots=True)
class _ChoiceMatchers:
    """One doc's step-2 and step-3 regexes with what their matches map to."""

    by_text: re.Pattern[str]
    text_to_letter: dict[str, str]
    by_letter: re.Pattern[str]
    letter_to_target: dict[str, str]


@register_filter("multi_choice_regex")
class MultiChoiceRegexFilter(RegexParams):
    """Map each response to a choice letter ``(A)``.. via a regex, the choice texts, or
    ``: X`` (needs ``doc["choices"]``)."""

    label: ClassVar[str] = "multi_choice_regex"
    ignore_case: StrictBool = False
    """Step 2 only: compare the response and the choices lowercased."""
    ignore_punctuation: StrictBool = False
    """Step 2 only: delete punctuation from the response and the choices."""
    regexes_to_ignore: list[StrictStr] | None = None
    """Step 2 only: patterns deleted from the response and the choices first."""

    @field_validator("regexes_to_ignore")
    @classmethod
    def _valid_patterns(cls, patterns: list[str] | None) -> list[str] | None:
        for pattern in patterns or ():
            compile_pattern(pattern)
        return patterns

    def normalize(self, text: str) -> str:
        """The step-2 view of a response or a choice."""
        for pattern in self.regexes_to_ignore or ():
            text = re.sub(pattern, "", text)
        if self.ignore_case:
            text = text.lower()
        if self.ignore_punctuation:
            text = strip_punctuation(text)
        return text

    def find(self, regex: re.Pattern[str], text: str, convert: Mapping[str, str]) -> str:
        """One step's answer: the selected match, stripped and converted; ``""`` for none."""
        match = select_match(regex.findall(text), self.group_select)
        if match is None:
            return ""
        if isinstance(match, tuple):
            match = next((group for group in match if group), "")
            if not match:
                return ""
        answer = str(match).strip()
        return convert.get(answer, answer) if answer else answer

    def matchers(self, doc: Mapping[str, Any], index: int) -> _ChoiceMatchers:
        """The choice-text and bare-letter regexes for one doc's ``choices``."""
        choices = doc.get("choices") if isinstance(doc, Mapping) else None
        if choices is None:
            raise FilterError(
                f"{self.label}: doc {index} has no 'choices' field; this filter maps "
                "answers to the letters of the doc's choices"
            )
        if isinstance(choices, str) or not isinstance(choices, Sequence):
            raise FilterError(
                f"{self.label}: doc {index}: 'choices' is {describe(choices)}, not a list"
            )
        if len(choices) > 26:
            raise FilterError(
                f"{self.label}: doc {index} has {len(choices)} choices; "
                "answer letters stop at Z (26)"
            )
        alternatives: list[str] = []
        text_to_letter: dict[str, str] = {}
        letters: list[str] = []
        for position, choice in enumerate(choices):
            if not isinstance(choice, str):
                raise FilterError(
                    f"{self.label}: doc {index}: choice {position} is {describe(choice)}, not text"
                )
            letter = chr(ord("A") + position)
            key = self.normalize(choice.strip())
            alternatives.append(re.escape(key))
            text_to_letter[key] = f"({letter})"
            letters.append(letter)
        # longest first (stable): regex alternation takes the leftmost alternative that fits
        alternatives.sort(key=len, reverse=True)
        return _ChoiceMatchers(
            by_text=re.compile("|".join(alternatives)),
            text_to_letter=text_to_letter,
            by_letter=re.compile(rf":[\s]*({'|'.join(letters)})"),
            letter_to_target={letter: f"({letter})" for letter in letters},
        )

    def choose(self, resp: object, matchers: _ChoiceMatchers) -> str:
        """One response's answer after the three steps, or the fallback."""
        text = text_of(resp)
        answer = self.find(self._regex, text, {})
        if not answer:
            answer = self.find(matchers.by_text, self.normalize(text), matchers.text_to_letter)
        if not answer:
            answer = self.find(matchers.by_letter, text, matchers.letter_to_target)
        return answer or self.fallback

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        if len(resps) != len(docs):
            raise FilterError(
                f"{self.label}: got {len(resps)} response entries for {len(docs)} docs"
            )
        out: list[Any] = []
        for i, (entry, doc) in enumerate(zip(resps, docs, strict=True)):
            matchers = self.matchers(doc, i)
            out.append([self.choose(r, matchers) for r in responses_of(entry, self.label, i)])
        return out


DEFAULT_SENTINELS: tuple[str, ...] = (
    r"(?:the\s+)?(?:final|correct)?\s*answer\s*(?:is|:)\s*",
    r"therefore[,\s]+(?:the\s+answer\s+is\s*)?",
)
"""PR #3879's sentinels: "the/final/correct answer is|:" and "therefore, (the answer is)"."""

LETTER_AFTER_SENTINEL = re.compile(r"\(([A-Za-z])\)|(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")
"""``(X)`` or a standalone letter (not the first letter of a word such as "by")."""


@register_filter("anchored_multi_choice_regex")
class AnchoredMultiChoiceRegexFilter(MultiChoiceRegexFilter):
    """Like ``multi_choice_regex``, but the letter after "the answer is"/"therefore" (or
    your ``answer_sentinels``) wins over the positional match."""

    label: ClassVar[str] = "anchored_multi_choice_regex"
    answer_sentinels: list[StrictStr] | None = None
    """Regexes that introduce the committed answer, tried in order; ``None`` means
    ``DEFAULT_SENTINELS``. Case-insensitive when ``ignore_case``."""
    fallback_to_positional: StrictBool = True
    """Without a sentinel: ``multi_choice_regex``'s answer (True) or the fallback (False)."""
    _sentinels: list[re.Pattern[str]] = PrivateAttr()

    @field_validator("answer_sentinels")
    @classmethod
    def _valid_sentinels(cls, patterns: list[str] | None) -> list[str] | None:
        for pattern in patterns or ():
            compile_pattern(pattern)
        return patterns

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        flags = re.IGNORECASE if self.ignore_case else 0
        patterns = DEFAULT_SENTINELS if self.answer_sentinels is None else self.answer_sentinels
        self._sentinels = [compile_pattern(p, flags) for p in patterns]

    def committed_letter(self, resp: str) -> str | None:
        """The letter after the first sentinel occurrence that has one, as ``(X)``.

        Only the text after the sentinel is searched (as PR #3879 does), so the standalone
        letter test does not look back into the sentinel itself.
        """
        for sentinel in self._sentinels:
            for found in sentinel.finditer(resp):
                letter = LETTER_AFTER_SENTINEL.search(resp[found.end() :])
                if letter is not None:
                    return f"({letter.group(1) or letter.group(2)})"
        return None

    def anchored(self, resp: object, positional: str, n_choices: int) -> str:
        """One response's answer given ``multi_choice_regex``'s ``positional`` one."""
        if not isinstance(resp, str):
            return positional
        committed = self.committed_letter(resp)
        if committed is None:
            return positional if self.fallback_to_positional else self.fallback
        if self.ignore_case:
            committed = committed.upper()
        letter = committed[1:-1]
        if "A" <= letter <= "Z" and ord(letter) - ord("A") < n_choices:
            return committed
        return positional  # a sentinel, but no valid letter after it: keep the positional

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        positional = super().apply(resps, docs)
        out: list[Any] = []
        for i, (entry, doc, chosen) in enumerate(zip(resps, docs, positional, strict=True)):
            n_choices = len(doc["choices"])
            row = [
                self.anchored(resp, answer, n_choices)
                for resp, answer in zip(responses_of(entry, self.label, i), chosen, strict=True)
            ]
            out.append(row)
        return out
