"""``--ids``, ``--sample``/``--seed`` and ``--limit``: which items a run runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.operations.item_selection import ItemSelection, select_items
from assay.types import Item


def _items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", input=k) for k in range(n)]


def _ids(selection: ItemSelection, n: int = 50) -> list[str]:
    return [item.id for item in select_items(_items(n), selection)]


def test_limit_reads_only_what_it_runs() -> None:
    read: list[int] = []

    def stream() -> Iterator[Item]:
        for k in range(1_000_000):
            read.append(k)
            yield Item(id=f"i{k}", input=k)

    chosen = list(select_items(stream(), ItemSelection(limit=3)))
    assert [i.id for i in chosen] == ["i0", "i1", "i2"] and len(read) == 3


def test_ids_keep_the_data_order_and_unknown_ids_are_named() -> None:
    assert _ids(ItemSelection(ids="i7, i2")) == ["i2", "i7"]
    with pytest.raises(ValueError, match=r"no item with id 'nope'"):
        _ids(ItemSelection(ids=["i1", "nope"]))
    with pytest.raises(ValueError, match="no item id"):
        ItemSelection(ids=" , ")


def test_a_seeded_sample_is_reproducible_ordered_and_seed_dependent() -> None:
    first = _ids(ItemSelection(sample=10, seed=1))
    assert first == _ids(ItemSelection(sample=10, seed=1))
    assert len(set(first)) == 10
    assert first == sorted(first, key=lambda i: int(i[1:]))  # the data's order
    assert first != _ids(ItemSelection(sample=10, seed=2))
    assert _ids(ItemSelection(sample=100), n=5) == [f"i{k}" for k in range(5)]


def test_sample_is_roughly_uniform() -> None:
    counts = dict.fromkeys(range(20), 0)
    for seed in range(2_000):
        for item in select_items(_items(20), ItemSelection(sample=5, seed=seed)):
            counts[item.input] += 1
    # each item is picked with probability 1/4: 500 expected of 2,000 draws
    assert all(400 < c < 600 for c in counts.values()), counts


def test_order_is_ids_then_sample_then_limit_and_metadata_records_it() -> None:
    selection = ItemSelection(ids=[f"i{k}" for k in range(0, 50, 2)], sample=6, seed=3, limit=2)
    chosen = _ids(selection)
    assert len(chosen) == 2 and all(int(i[1:]) % 2 == 0 for i in chosen)
    assert chosen == _ids(ItemSelection(ids=selection.ids, sample=6, seed=3))[:2]
    assert ItemSelection(sample=2).metadata() == {"sample": 2, "seed": 0}
    assert ItemSelection().selects_all
