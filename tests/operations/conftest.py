"""The dataset tests' sample items, for the import/export operations."""

from __future__ import annotations

from tests.datasets.conftest import items, tricky_items

__all__ = ["items", "tricky_items"]
