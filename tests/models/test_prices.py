"""Price table lookups and cost arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.models.prices import PriceTable, estimate_cost
from assay.types import Usage


def test_lookup_order_exact_provider_tail_and_prefix() -> None:
    table = PriceTable()
    table.set("gpt-4o", input=2.5, output=10)
    table.set("gpt-4o-mini", input=0.15, output=0.6)
    table.set("openrouter/gpt-4o-mini", input=0.2, output=0.8)
    assert table.lookup(None, "gpt-4o-mini") == table.lookup("openai", "gpt-4o-mini")
    assert table.lookup("openai", "gpt-4o-mini").input == 0.15  # type: ignore[union-attr]
    assert table.lookup("openrouter", "gpt-4o-mini").input == 0.2  # type: ignore[union-attr]
    assert table.lookup("together", "openai/gpt-4o-mini").input == 0.15  # type: ignore[union-attr]
    # dated snapshot: the longest matching prefix wins
    assert table.lookup("openai", "gpt-4o-mini-2024-07-18").input == 0.15  # type: ignore[union-attr]
    assert table.lookup("openai", "gpt-4o-2024-08-06").input == 2.5  # type: ignore[union-attr]
    assert table.lookup("openai", "mystery-model") is None


def test_cost_arithmetic_with_cached_input() -> None:
    table = PriceTable()
    table.set("m", input=1.0, output=4.0, cached_input=0.5)
    usage = Usage(input_tokens=1_000_000, output_tokens=250_000, cached_input_tokens=200_000)
    assert table.cost(None, "m", usage) == pytest.approx(0.8 + 0.1 + 1.0)
    table.set("n", input=1.0, output=4.0)  # no cached price: all input at the full price
    assert table.cost(None, "n", usage) == pytest.approx(1.0 + 1.0)
    assert table.cost(None, "unknown", usage) is None


def test_builtin_table_knows_a_common_judge() -> None:
    cost = estimate_cost("openai", "gpt-4o-mini", Usage(input_tokens=1000, output_tokens=100))
    assert cost is not None and 0 < cost < 0.01


def test_prices_file_overrides(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"house-model": {"input": 3, "output": 6}}))
    table = PriceTable()
    table.update_from_file(path)
    assert table.cost(None, "house-model", Usage(input_tokens=10**6)) == 3.0
    path.write_text(json.dumps({"bad": {"input": 1}}))
    with pytest.raises(ValueError, match="'bad'"):
        table.update_from_file(path)


def test_prices_file_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"env-model": {"input": 1, "output": 2}}))
    monkeypatch.setenv("ASSAY_PRICES_FILE", str(path))
    table = PriceTable(load_env=True)
    assert table.cost(None, "env-model", Usage(output_tokens=10**6)) == 2.0


def test_a_price_set_after_a_lookup_is_used(tmp_path: Path) -> None:
    """Lookups are remembered (every judge call prices its answer), and forgotten on change."""
    table = PriceTable()
    assert table.lookup("openai", "gpt-9") is None
    table.set("gpt-9", input=1.0, output=2.0)
    assert table.lookup("openai", "gpt-9").input == 1.0  # type: ignore[union-attr]
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"openai/gpt-9": {"input": 5, "output": 6}}))
    table.update_from_file(path)
    assert table.lookup("openai", "gpt-9").input == 5.0  # type: ignore[union-attr]
