"""Token prices → the cost of a model call, when the model is known.

Prices are USD per one million tokens, input and output separately (and, where the provider
discounts them, cached input tokens). The built-in table holds indicative list prices of a
few common judge models; providers change prices, so treat the numbers as estimates and
override them: ``DEFAULT_PRICES.set("my-model", input=0.2, output=0.8)``, or point
``ASSAY_PRICES_FILE`` at a JSON file ``{"model": {"input": 0.2, "output": 0.8}}`` (loaded
once, on first use, on top of the built-ins). A model that is not in the table has no cost
(``None``), never a guessed one: an unknown cost is shown as unknown, not as zero.

Lookup order: ``provider/model`` exactly, then ``model`` exactly, then the last path segment
of the model (``openai/gpt-4o-mini`` on OpenRouter), then the longest table key that the
model name starts with (dated snapshots such as ``gpt-4o-mini-2024-07-18``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.types import Usage

PRICES_FILE_ENV = "ASSAY_PRICES_FILE"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per one million tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = usage.cached_input_tokens or 0
        if self.cached_input is None:
            cached = 0
        fresh = max(0, usage.input_tokens - cached)
        total = fresh * self.input + usage.output_tokens * self.output
        if self.cached_input is not None:
            total += cached * self.cached_input
        return total / 1_000_000


# Indicative list prices (USD / 1M tokens: input, output). Estimates, not invoices.
_BUILTIN: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "gemini-1.5-flash": Price(0.075, 0.30),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "llama-3.1-8b-instant": Price(0.05, 0.08),
    "llama-3.3-70b-versatile": Price(0.59, 0.79),
}


class PriceTable:
    """A mutable table of prices keyed by ``model`` or ``provider/model``."""

    def __init__(self, prices: dict[str, Price] | None = None, *, load_env: bool = False) -> None:
        self._prices: dict[str, Price] = dict(prices or {})
        self._load_env = load_env
        self._found: dict[tuple[str | None, str], Price | None] = {}
        """Lookups answered so far (each judge call prices its answer): emptied on change."""

    def set(
        self, model: str, *, input: float, output: float, cached_input: float | None = None
    ) -> None:
        """Add or replace the price of ``model`` (or ``provider/model``)."""
        self._ensure_env()
        self._prices[model] = Price(input, output, cached_input)
        self._found.clear()

    def update_from_file(self, path: str | Path) -> None:
        """Merge a JSON file ``{"model": {"input": x, "output": y, "cached_input": z}}``."""
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object of model -> price")
        for model, entry in data.items():
            if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
                raise ValueError(
                    f"{path}: price of {model!r} needs 'input' and 'output' (USD per 1M tokens)"
                )
            cached = entry.get("cached_input")
            self._prices[str(model)] = Price(
                float(entry["input"]),
                float(entry["output"]),
                None if cached is None else float(cached),
            )
        self._found.clear()

    def lookup(self, provider: str | None, model: str) -> Price | None:
        self._ensure_env()
        try:
            return self._found[(provider, model)]
        except KeyError:
            found = self._found[(provider, model)] = self._search(provider, model)
            return found

    def _search(self, provider: str | None, model: str) -> Price | None:
        candidates = []
        if provider:
            candidates.append(f"{provider}/{model}")
        candidates.append(model)
        tail = model.rsplit("/", 1)[-1]
        if tail != model:
            candidates.append(tail)
        for key in candidates:
            if key in self._prices:
                return self._prices[key]
        best: str | None = None
        for key in self._prices:
            if "/" not in key and tail.startswith(key) and (best is None or len(key) > len(best)):
                best = key
        return self._prices[best] if best is not None else None

    def cost(self, provider: str | None, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` of ``model``, or ``None`` when the model has no price."""
        price = self.lookup(provider, model)
        return None if price is None else price.cost(usage)

    def _ensure_env(self) -> None:
        if not self._load_env:
            return
        self._load_env = False
        path = os.environ.get(PRICES_FILE_ENV)
        if path:
            self.update_from_file(path)


DEFAULT_PRICES = PriceTable(_BUILTIN, load_env=True)
"""The table models use unless given another one."""


def estimate_cost(provider: str | None, model: str, usage: Usage) -> float | None:
    """The cost of ``usage`` by the default table (for records that stored only tokens)."""
    return DEFAULT_PRICES.cost(provider, model, usage)
