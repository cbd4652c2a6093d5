"""Which items of a dataset a run runs: ``--ids``, ``--sample N --seed S`` and ``--limit N``.

Smoke tests run a few items of a large dataset before paying for all of them (Inspect's
``--limit`` and ``--sample-id``). The selection is applied in one fixed order, ids first,
then the seeded sample, then the limit, so the same flags always pick the same items, and
it is recorded in the run's metadata (``selection``) so a run says it is a subset.

``select_items`` streams: ``--limit 5`` on a million-row file reads five rows; a sample
keeps only its ``N`` items (reservoir sampling) and returns them in the data's order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay.types import Item


class ItemSelection(BaseModel):
    """A subset of a run's items; every field ``None`` selects them all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ids: tuple[str, ...] | None = Field(default=None, description="Only these item ids.")
    sample: int | None = Field(default=None, ge=1, description="A random sample of N items.")
    seed: int | None = Field(default=None, description="Seed of the sample (default 0).")
    limit: int | None = Field(default=None, ge=1, description="At most the first N items.")

    @field_validator("ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        """``"a,b"`` (a flag) or ``["a", "b"]`` (YAML); blanks are dropped."""
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            ids = [str(v).strip() for v in value if str(v).strip()]
            if not ids:
                raise ValueError("no item id given")
            return tuple(dict.fromkeys(ids))
        return value

    @property
    def selects_all(self) -> bool:
        return self.ids is None and self.sample is None and self.limit is None

    def metadata(self) -> dict[str, Any]:
        """What a run stores about its subset (only the fields that were given)."""
        data = self.model_dump(exclude_none=True)
        if "ids" in data:
            data["ids"] = list(data["ids"])
        if self.sample is not None and self.seed is None:
            data["seed"] = 0
        return data


def select_items(items: Iterable[Item], selection: ItemSelection) -> Iterator[Item]:
    """The items of ``selection``, in their original order. Ids that name no item raise a
    ``ValueError`` naming them (only once the data is read to its end)."""
    stream: Iterator[Item] = iter(items)
    if selection.ids is not None:
        stream = _only_ids(stream, selection.ids)
    if selection.sample is not None:
        stream = iter(_sample(stream, selection.sample, selection.seed or 0))
    if selection.limit is not None:
        stream = itertools.islice(stream, selection.limit)
    return stream


def _only_ids(items: Iterator[Item], ids: tuple[str, ...]) -> Iterator[Item]:
    missing = dict.fromkeys(ids)
    for item in items:
        if item.id in missing:
            missing.pop(item.id, None)
            yield item
        elif item.id in ids:  # a repeated id: every row with it runs, as without --ids
            yield item
    if missing:
        names = ", ".join(repr(i) for i in itertools.islice(missing, 5))
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ValueError(f"--ids: no item with id {names}{more} in the data")


def _sample(items: Iterator[Item], size: int, seed: int) -> list[Item]:
    """Reservoir sampling (algorithm R): ``size`` items, uniformly, in one pass."""
    rng = random.Random(seed)
    reservoir: list[tuple[int, Item]] = []
    for index, item in enumerate(items):
        if index < size:
            reservoir.append((index, item))
            continue
        slot = rng.randint(0, index)
        if slot < size:
            reservoir[slot] = (index, item)
    reservoir.sort(key=lambda pair: pair[0])
    return [item for _, item in reservoir]
