"""The labelled items of a calibration: where the human label is, what number it is, which
split an item belongs to, and (pairwise) the same pair in the other order.

Every problem is an error naming the item and the key (``label``, ``label_map``), raised
before any scorer runs: a calibration that skipped the rows it could not read would report
agreement on a different set than the one the user labelled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assay.calibration.config import CalibrationConfig, label_text
from assay.types import Item

SWAPPED_SUFFIX = "::swapped"
"""Id suffix of a pairwise item's copy with its two outputs in the other order."""

_ITEM_FIELDS = ("input", "output", "expected_output", "context", "id")


class CalibrationDataError(ValueError):
    """The labelled data cannot be calibrated on as configured (names item and key)."""


@dataclass(frozen=True, slots=True)
class LabelledItem:
    """An item with its human label as a number and its split (``None``: no split)."""

    item: Item
    raw_label: Any
    label: float
    split: str | None = None


def label_value(item: Item, path: str) -> Any:
    """The value at ``path`` in ``item``: an item field, ``metadata.a.b``, or a bare name
    looked up in metadata (a data file's extra columns land there). Missing raises
    ``KeyError`` with the path."""
    head, _, rest = path.partition(".")
    if head in _ITEM_FIELDS:
        current: Any = getattr(item, head)
    elif head == "metadata":
        current, rest = item.metadata, rest
    else:
        current, rest = item.metadata, path
    if head in _ITEM_FIELDS and not rest:
        return current
    for step in rest.split(".") if rest else ():
        if isinstance(current, Mapping) and step in current:
            current = current[step]
        else:
            raise KeyError(path)
    return current


def numeric_label(value: Any, *, config: CalibrationConfig, item_id: str) -> float:
    """The human label as a number: mapped through ``label_map`` when given, else taken as
    a number; checked against what ``kind`` allows."""
    where = f"item {item_id!r}: label {config.label!r}"
    if config.label_map is not None:
        key = label_text(value)
        if key not in config.label_map:
            known = ", ".join(repr(k) for k in config.label_map)
            raise CalibrationDataError(
                f"{where} is {value!r}, which key 'label_map' does not map (it maps {known})"
            )
        number = float(config.label_map[key])
    elif isinstance(value, bool) or value is None:
        raise CalibrationDataError(
            f"{where} is {value!r}, not a number; add a 'label_map' (e.g. yes: 1, no: 0)"
        )
    elif isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise CalibrationDataError(
                f"{where} is {value!r}, not a number; add a 'label_map' to map it"
            ) from None
    else:
        raise CalibrationDataError(f"{where} is {value!r}, not a number")
    if not math.isfinite(number):
        raise CalibrationDataError(f"{where} is {value!r}, not a finite number")
    if config.kind == "binary" and number not in (0.0, 1.0):
        raise CalibrationDataError(
            f"{where} is {value!r} (= {number:g}); kind 'binary' needs 0 or 1 "
            "(map labels with 'label_map')"
        )
    if config.kind == "pairwise" and number not in (0.0, 0.5, 1.0):
        raise CalibrationDataError(
            f"{where} is {value!r} (= {number:g}); kind 'pairwise' needs 1 (first output "
            "better), 0 (second better) or 0.5 (tie); map labels with 'label_map'"
        )
    return number


def labelled_items(items: Iterable[Item], config: CalibrationConfig) -> list[LabelledItem]:
    """Every item with its numeric label and split; the first unreadable label raises."""
    labelled: list[LabelledItem] = []
    for item in items:
        try:
            raw = label_value(item, config.label)
        except KeyError:
            raise CalibrationDataError(
                f"item {item.id!r} has no label at key 'label' = {config.label!r} (an item "
                "field, metadata.NAME, or a column of the data file)"
            ) from None
        if config.kind == "pairwise":
            pair_outputs(item)  # fail now, not in the judge
        labelled.append(LabelledItem(item, raw, numeric_label(raw, config=config, item_id=item.id)))
    if len(labelled) < 2:
        raise CalibrationDataError(
            f"a calibration needs at least 2 labelled items, got {len(labelled)}"
        )
    if config.split is not None:
        test_ids = split_test_ids(
            [entry.item.id for entry in labelled], config.split.test, config.split.seed
        )
        labelled = [
            LabelledItem(e.item, e.raw_label, e.label, "test" if e.item.id in test_ids else "dev")
            for e in labelled
        ]
    return labelled


def split_test_ids(ids: list[str], fraction: float, seed: int) -> set[str]:
    """The held-out ids: a seeded random ``fraction`` of them (at least one, and at least
    one left for development). Depends on the set of ids, not their order, so re-ordering
    the file does not move items between splits."""
    ordered = sorted(ids)
    count = min(max(1, round(fraction * len(ordered))), len(ordered) - 1)
    chosen = np.random.default_rng(seed).permutation(len(ordered))[:count]
    return {ordered[int(i)] for i in chosen}


def pair_outputs(item: Item) -> tuple[Any, Any]:
    """The two outputs of a pairwise item: ``output`` as a two-element list, or the
    ``output_1``/``output_2`` columns of the data file (kept in metadata)."""
    if isinstance(item.output, list | tuple) and len(item.output) == 2:
        return item.output[0], item.output[1]
    meta = item.metadata
    if "output_1" in meta and "output_2" in meta:
        return meta["output_1"], meta["output_2"]
    raise CalibrationDataError(
        f"item {item.id!r}: kind 'pairwise' needs 'output' as a list of the two outputs "
        "(or columns output_1 and output_2)"
    )


def pairwise_run_items(labelled: list[LabelledItem]) -> list[Item]:
    """Each pair in the given order and swapped (id + ``SWAPPED_SUFFIX``), so the judge sees
    both orders; the scorer gets ``output=[first, second]``."""
    items: list[Item] = []
    for entry in labelled:
        first, second = pair_outputs(entry.item)
        meta = {k: v for k, v in entry.item.metadata.items() if k not in ("output_1", "output_2")}
        base = entry.item.model_copy(update={"output": [first, second], "metadata": meta})
        swapped = base.model_copy(
            update={"id": entry.item.id + SWAPPED_SUFFIX, "output": [second, first]}
        )
        items.extend([base, swapped])
    return items


def file_data_key(path: str | Path) -> str:
    """A data file's identity: the sha256 of its bytes (and its name, for people)."""
    sha = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return f"sha256:{sha.hexdigest()} ({Path(path).name})"


def dataset_data_key(name: str, version: int) -> str:
    """A stored dataset's identity: its name at a version."""
    return f"dataset:{name}@{version}"
