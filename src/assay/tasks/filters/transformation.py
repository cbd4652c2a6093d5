"""Transformation filters: rewrite each response (``lowercase``, ``uppercase``, ``map``,
``format_span``).

Each walks a doc's entry element by element, as lm-eval does. After ``take_first`` an entry
is a single string, so these then walk its *characters*: ``map`` after ``take_first`` maps
each character (polemo2's regex → take_first → map → take_first works only because its
answers are one letter long, and ``"[invalid]"`` becomes nine ``default_value``s). That
quirk is kept, since real configs' scores depend on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.tasks.filters.base import (
    FilterError,
    FilterParams,
    describe,
    require_text,
    responses_of,
)
from assay.tasks.filters.registry import register_filter


def _each_text(name: str, resps: list[Any], change: Callable[[str], Any]) -> list[Any]:
    return [
        [
            change(require_text(name, resp, i, j))
            for j, resp in enumerate(responses_of(entry, name, i))
        ]
        for i, entry in enumerate(resps)
    ]


@register_filter("lowercase")
class Lowercase(FilterParams):
    """Lowercase each response."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return _each_text("lowercase", resps, str.lower)


@register_filter("uppercase")
class Uppercase(FilterParams):
    """Uppercase each response."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return _each_text("uppercase", resps, str.upper)


@register_filter("map")
class MapFilter(FilterParams):
    """Replace each response with ``mapping_dict[response]``, else ``default_value``."""

    mapping_dict: dict[Any, Any] | None = None
    """YAML gives string keys; ``None`` means ``{}`` (everything maps to the default)."""
    default_value: Any = None

    def value(self, resp: object, doc: int, repeat: int) -> Any:
        """One response's mapped value."""
        try:
            return (self.mapping_dict or {}).get(resp, self.default_value)
        except TypeError:  # unhashable
            raise FilterError(
                f"map: doc {doc} response {repeat} is {describe(resp)}, which cannot be a "
                "mapping_dict key"
            ) from None

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [
            [self.value(resp, i, j) for j, resp in enumerate(responses_of(entry, "map", i))]
            for i, entry in enumerate(resps)
        ]


SPAN_LABELS: tuple[tuple[str, str], ...] = (
    ("person", "PER"),
    ("location", "LOC"),
    ("organization", "ORG"),
    ("counties", "LOC"),
    ("places", "LOC"),
    ("people", "PER"),
    ("persons", "PER"),
    ("company", "ORG"),
    ("country", "LOC"),
    ("continent", "LOC"),
    ("time", "DATE"),
    ("date", "DATE"),
    ("per", "PER"),
    ("loc", "LOC"),
    ("org", "ORG"),
)
"""Label words and the tag each becomes, in lm-eval's order (the order matters: each
rewrite runs on the previous one's output)."""

_LABEL_REWRITES = tuple(
    (re.compile(rf"\b{re.escape(word)}\s*:"), f"{tag}:") for word, tag in SPAN_LABELS
)
_ENTITY_GROUP = re.compile(r"\b(PER|LOC|ORG|DATE):\s*([^$]+)")


def normalize_labels(text: str) -> str:
    """Lowercase, rewrite the label before each ``:`` to its tag, collapse ``$$`` to ``$``
    and drop trailing ``$``. Entity text is left alone (lm-eval #3887)."""
    text = text.lower()
    for label, tag in _LABEL_REWRITES:
        text = label.sub(tag, text)
    return text.replace("$$", "$").rstrip("$")


def format_entities(text: str) -> str:
    """``TAG: a, b $ TAG: c`` as ``tag: a $ tag: b $ tag: c`` without ``none`` entities."""
    text = text.replace("\n", "$").strip()
    entities: list[str] = []
    for tag, values in _ENTITY_GROUP.findall(text):
        for value in values.split(","):
            entity = value.strip()
            if entity.lower() != "none":
                entities.append(f"{tag.lower()}: {entity}")
    return " $ ".join(entities)


@register_filter("format_span")
class FormatSpan(FilterParams):
    """Normalize NER-style output to ``per: x $ loc: y`` with canonical labels."""

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return _each_text("format_span", resps, self.format)

    @staticmethod
    def format(text: str) -> str:
        """One response's normalized spans."""
        return format_entities(normalize_labels(text.lower()))
