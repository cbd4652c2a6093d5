"""What the dataset repository returns: plain frozen pydantic values, detached from the DB."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.types import Item


class DatasetInfo(BaseModel):
    """A dataset as it is now: ``version`` is its latest version (0 when just created),
    ``item_count`` the number of items at that version."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    description: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    version: int = 0
    item_count: int = 0
    created_at: float
    updated_at: float


class DatasetVersion(BaseModel):
    """One change batch: how many items it added, updated and deleted, and the count after."""

    model_config = ConfigDict(frozen=True)

    dataset_id: str
    version: int
    created_at: float
    note: str | None = None
    added: int = 0
    updated: int = 0
    deleted: int = 0
    item_count: int = 0


class ItemVersion(BaseModel):
    """One row of an item's history: the item as it was from ``version`` up to (not
    including) ``valid_to`` (``None``: still current). A deletion is a row with
    ``deleted=True`` and no ``item``."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    version: int
    valid_to: int | None = None
    deleted: bool = False
    item: Item | None = None
    position: int
    created_at: float
