"""The optimization's data: train, validation and held-out test items.

Why the splits are resolved once, up front: GEPA samples minibatches and fronts by position,
so the items must be the same lists on every run of the same optimization, including a
resume. A stored dataset is pinned to the version it had when the optimization started
(recorded in the config), and a single given split is divided with a seeded shuffle, so
resuming rebuilds exactly the same train and validation sets.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    """``config`` with every source pinned, as stored with the optimization so that a resume
    reads the same items wherever it is started from: a stored dataset to its current
    version, a data file (and ``run_dir``) to an absolute path, and the file to its content
    hash (``_read`` refuses a file that changed since)."""
    updates: dict[str, Any] = {}
    for split in ("train", "val", "test"):
        ref: DataRef | None = getattr(config, split)
        if ref is not None and ref.dataset is not None and ref.version is None:
            found = store.datasets.get(ref.dataset)
            updates[split] = ref.model_copy(update={"version": found.version})
        elif ref is not None and ref.data is not None and ref.sha256 is None:
            path = Path(ref.data).resolve()
            try:
                digest = file_sha256(path)
            except OSError:  # unreadable: ``_read`` reports it, naming the split
                digest = None
            updates[split] = ref.model_copy(update={"data": str(path), "sha256": digest})
    if config.run_dir and not Path(config.run_dir).is_absolute():
        updates["run_dir"] = str(Path(config.run_dir).resolve())
    return config.model_copy(update=updates) if updates else config


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _read(ref: DataRef, store: Store, split: str) -> list[Item]:
    try:
        if ref.dataset is not None:
            return list(store.datasets.items(ref.dataset, ref.version))
        assert ref.data is not None
        if ref.sha256 is not None and file_sha256(Path(ref.data)) != ref.sha256:
            raise ValueError(
                "the file changed since the optimization started (its SHA-256 differs): "
                "restore it, or start a new optimization"
            )
        return list(load_items(ref.data))
    except (OSError, ValueError, LookupError) as exc:
        raise ValueError(f"{split}: cannot read {ref.label}: {exc}") from exc


def load_splits(config: OptimizeConfig, store: Store) -> Splits:
    """The three splits of ``config`` (test may be empty); see ``make_splits``."""
    return make_splits(
        _read(config.train, store, "train"),
        None if config.val is None else _read(config.val, store, "val"),
        None if config.test is None else _read(config.test, store, "test"),
        seed=config.seed,
        val_fraction=config.val_fraction,
        labels={
            split: ref.label
            for split in ("train", "val", "test")
            if (ref := getattr(config, split)) is not None
        },
    )


def make_splits(
    train: list[Item],
    val: list[Item] | None,
    test: list[Item] | None,
    *,
    seed: int,
    val_fraction: float,
    labels: dict[str, str],
) -> Splits:
    """The splits from their items (``labels``: where each came from). With no ``val``,
    ``train`` is shuffled with ``seed`` and its first ``val_fraction`` becomes validation.
    A ``ValueError`` starting with the split's name says what is wrong (no items, too few to
    split, test items that are also in train/val); the HTTP API checks inline items with it
    before storing them."""
    for split, items in (("train", train), ("val", val), ("test", test)):
        if items is not None and not items:
            raise ValueError(f"{split}: {labels.get(split, split)} has no items")
    sources = {"train": labels.get("train", "train")}
    if val is not None:
        sources["val"] = labels.get("val", "val")
    else:
        if len(train) < 2:
            raise ValueError(
                "train: a seeded train/validation split needs at least 2 items "
                f"({sources['train']} has {len(train)}); give 'val'"
            )
        shuffled = list(train)
        random.Random(seed).shuffle(shuffled)
        n_val = min(len(shuffled) - 1, max(1, round(len(shuffled) * val_fraction)))
        val, train = shuffled[:n_val], shuffled[n_val:]
        label = f"{sources['train']} (seeded split, seed {seed})"
        sources = {"train": label, "val": label}
    if test is not None:
        sources["test"] = labels.get("test", "test")
        overlap = {i.id for i in test} & ({i.id for i in train} | {i.id for i in val})
        if overlap:
            raise ValueError(
                f"test: {len(overlap)} item id(s) are also in train/val (e.g. "
                f"{sorted(overlap)[0]!r}); a held-out split must be held out"
            )
    return Splits(
        train=[Example("train", i) for i in train],
        val=[Example("val", i) for i in val],
        test=[Example("test", i) for i in test or []],
        sources=sources,
    )
