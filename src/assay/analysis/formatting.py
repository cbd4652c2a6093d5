"""Number and text formatting shared by the terminal and HTML reports, so both show the
same figures the same way."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from assay.types import Usage

DASH = "—"


def arrow(higher_is_better: bool) -> str:
    """The direction marker shown next to a scorer: which way is better."""
    return "↑" if higher_is_better else "↓"


def num(value: float | None, digits: int = 3) -> str:
    """A score: fixed decimals below 100, fewer above (a 0-100 scale needs no 3 decimals)."""
    if value is None:
        return DASH
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 3) -> str:
    """A delta, always with its sign so a small drop is not read as a score."""
    if value is None:
        return DASH
    return f"{value:+.{digits}f}"


def ci(low: float | None, high: float | None, digits: int = 3, *, sign: bool = False) -> str:
    if low is None or high is None:
        return DASH
    fmt = signed if sign else num
    return f"[{fmt(low, digits)}, {fmt(high, digits)}]"


def pct(value: float | None) -> str:
    return DASH if value is None else f"{100.0 * value:.1f}%"


def aggregates(values: Mapping[str, float | None]) -> str:
    """A scorer's declared aggregations other than the mean (shown in its own column):
    ``median 0.500 · pass@2 0.833``."""
    return " · ".join(f"{name} {num(value)}" for name, value in values.items() if name != "mean")


def values_text(values: Mapping[str, float]) -> str:
    """A result's named values: ``rouge1 0.500, rouge2 0.250``."""
    return ", ".join(f"{key} {num(value)}" for key, value in values.items())


def ms(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value / 1000.0:.2f} s" if value >= 10_000 else f"{value:.1f} ms"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)} min {secs:.0f} s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)} h {int(minutes)} min"


def tokens(usage: Usage) -> str:
    return f"{usage.total_tokens:,} ({usage.input_tokens:,} in / {usage.output_tokens:,} out)"


def money(value: float | None) -> str:
    return DASH if value is None else f"${value:.4f}"


def as_text(value: Any) -> str:
    """Any JSON-shaped value as display text: strings verbatim, the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def split_words(text: str, limit: int) -> tuple[str, str]:
    """``text`` split into a head of at most ``limit`` characters and the rest, at the
    last whitespace within the head so no word is cut; a single word longer than the
    whole window (a URL, a hash) is cut at ``limit``. The rest starts at its first word."""
    if len(text) <= limit:
        return text, ""
    window = text[: limit + 1]
    at = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    if at <= 0:
        return text[:limit], text[limit:]
    return text[:at].rstrip(), text[at:].lstrip()


def clip(text: str, limit: int) -> str:
    """Shorten to at most ``limit`` characters at a word boundary, with an ellipsis, so
    one huge field cannot swamp a table."""
    if len(text) <= limit:
        return text
    head, _ = split_words(text, max(0, limit - 1))
    return head + "…"


def count(n: int, noun: str) -> str:
    """``1 scorer``, ``2 scorers``: a count with its noun in the right number."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
