"""The optimization's data: train, validation and held-out test items.

Why the splits are resolved once, up front: GEPA samples minibatches and fronts by position,
so the items must be the same lists on every run of the same optimization, including a
resume. A stored dataset is pinned to the version it had when the optimization started
(recorded in the config), and a single given split is divided with a seeded shuffle, so
resuming rebuilds exactly the same train and validation sets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from assay.datasets.load import load_items
from assay.optimize.config import DataRef, OptimizeConfig
from assay.store import Store
from assay.types import Item


@dataclass(frozen=True, slots=True)
class Example:
    """One item as GEPA sees it (its ``DataInst``): the item and the split it is from."""

    split: str
    item: Item


@dataclass(frozen=True)
class Splits:
    train: list[Example]
    val: list[Example]
    test: list[Example]
    sources: dict[str, str]
    """Where each split came from (file, ``dataset NAME vN``, or a seeded part of train)."""


def pin_versions(config: OptimizeConfig, store: Store) -> OptimizeConfig:
    """``config`` with every stored dataset pinned to its current version (kept in the
    store's copy of the config, so a resume reads the same items)."""
    updates: dict[str, DataRef] = {}
    for split in ("train", "val", "test"):
        ref: DataRef | None = getattr(config, split)
        if ref is not None and ref.dataset is not None and ref.version is None:
            found = store.datasets.get(ref.dataset)
            updates[split] = ref.model_copy(update={"version": found.version})
    return config.model_copy(update=updates) if updates else config


def _read(ref: DataRef, store: Store, split: str) -> list[Item]:
    try:
        if ref.dataset is not None:
            items = list(store.datasets.items(ref.dataset, ref.version))
        else:
            assert ref.data is not None
            items = list(load_items(ref.data))
    except (OSError, ValueError, LookupError) as exc:
        raise ValueError(f"{split}: cannot read {ref.label}: {exc}") from exc
    if not items:
        raise ValueError(f"{split}: {ref.label} has no items")
    return items


def load_splits(config: OptimizeConfig, store: Store) -> Splits:
    """The three splits of ``config`` (test may be empty). With no ``val``, ``train`` is
    shuffled with ``seed`` and its first ``val_fraction`` becomes validation."""
    train = _read(config.train, store, "train")
    sources = {"train": config.train.label}
    if config.val is not None:
        val = _read(config.val, store, "val")
        sources["val"] = config.val.label
    else:
        if len(train) < 2:
            raise ValueError(
                "train: a seeded train/validation split needs at least 2 items "
                f"({config.train.label} has {len(train)}); give 'val'"
            )
        shuffled = list(train)
        random.Random(config.seed).shuffle(shuffled)
        n_val = min(len(shuffled) - 1, max(1, round(len(shuffled) * config.val_fraction)))
        val, train = shuffled[:n_val], shuffled[n_val:]
        label = f"{config.train.label} (seeded split, seed {config.seed})"
        sources = {"train": label, "val": label}
    test: list[Item] = []
    if config.test is not None:
        test = _read(config.test, store, "test")
        sources["test"] = config.test.label
        overlap = {i.id for i in test} & ({i.id for i in train} | {i.id for i in val})
        if overlap:
            raise ValueError(
                f"test: {len(overlap)} item id(s) are also in train/val (e.g. "
                f"{sorted(overlap)[0]!r}); a held-out split must be held out"
            )
    return Splits(
        train=[Example("train", i) for i in train],
        val=[Example("val", i) for i in val],
        test=[Example("test", i) for i in test],
        sources=sources,
    )
