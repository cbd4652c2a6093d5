"""Datasets: SCD-2 versions, history, all-or-nothing streaming imports, duplicates."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from pydantic import ValidationError

from assay.store import (
    DatasetExistsError,
    DatasetNotFoundError,
    DatasetVersionNotFoundError,
    DuplicateItemError,
    InvalidItemIdError,
    ItemNotFoundError,
    Store,
)
from assay.store.tables import dataset_items, dataset_versions
from assay.types import Item


def items(n: int, start: int = 0, prefix: str = "i") -> list[Item]:
    return [
        Item(
            id=f"{prefix}{i}",
            input={"q": f"question {i}"},
            expected_output=f"answer {i}",
            context=[f"passage {i}"],
            metadata={"n": i},
        )
        for i in range(start, start + n)
    ]


def row_counts(store: Store) -> tuple[int, int]:
    with store.engine.connect() as conn:
        item_rows = conn.execute(sa.select(sa.func.count()).select_from(dataset_items)).scalar()
        version_rows = conn.execute(
            sa.select(sa.func.count()).select_from(dataset_versions)
        ).scalar()
    return int(item_rows or 0), int(version_rows or 0)


def test_create_get_list_delete(store: Store) -> None:
    info = store.datasets.create("qa", description="questions", metadata={"owner": "me"})
    assert (info.name, info.version, info.item_count) == ("qa", 0, 0)
    assert store.datasets.get("qa") == info
    assert store.datasets.get(info.id) == info
    assert store.datasets.get(info) == info
    store.datasets.create("another")
    assert [d.name for d in store.datasets.list()] == ["another", "qa"]
    with pytest.raises(DatasetExistsError, match="'qa' already exists"):
        store.datasets.create("qa")
    store.datasets.delete("qa")
    with pytest.raises(DatasetNotFoundError, match="'qa' not found"):
        store.datasets.get("qa")


def test_not_found_suggests_close_names(store: Store) -> None:
    store.datasets.create("support-tickets")
    with pytest.raises(DatasetNotFoundError, match="did you mean 'support-tickets'") as caught:
        store.datasets.get("suport-tickets")
    assert caught.value.suggestions == ["support-tickets"]


def test_every_change_batch_is_one_new_version(store: Store) -> None:
    store.datasets.create("qa")
    assert store.datasets.add_items("qa", items(3)) == 1
    assert store.datasets.add_items("qa", items(2, start=3), note="more") == 2
    assert store.datasets.update_item("qa", "i1", input="new question") == 3
    assert store.datasets.delete_items("qa", ["i0", "i4"]) == 4
    info = store.datasets.get("qa")
    assert (info.version, info.item_count) == (4, 3)
    versions = store.datasets.versions("qa")
    assert [v.version for v in versions] == [0, 1, 2, 3, 4]
    assert [(v.added, v.updated, v.deleted, v.item_count) for v in versions] == [
        (0, 0, 0, 0),
        (3, 0, 0, 3),
        (2, 0, 0, 5),
        (0, 1, 0, 5),
        (0, 0, 2, 3),
    ]
    assert versions[2].note == "more"


def test_items_at_old_versions_and_stable_positions(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(4))  # v1
    store.datasets.update_item("qa", "i2", expected_output="fixed")  # v2
    store.datasets.delete_items("qa", ["i1"])  # v3
    store.datasets.add_items("qa", items(1, start=9))  # v4

    assert [i.id for i in store.datasets.items("qa")] == ["i0", "i2", "i3", "i9"]
    assert [i.id for i in store.datasets.items("qa", 1)] == ["i0", "i1", "i2", "i3"]
    assert [i.id for i in store.datasets.items("qa", 3)] == ["i0", "i2", "i3"]
    assert list(store.datasets.items("qa", 0)) == []
    at_v1 = {i.id: i for i in store.datasets.items("qa", 1)}
    at_v2 = {i.id: i for i in store.datasets.items("qa", 2)}
    assert at_v1["i2"].expected_output == "answer 2"
    assert at_v2["i2"].expected_output == "fixed"
    assert at_v2["i2"].input == {"q": "question 2"}  # omitted fields keep their values
    assert at_v2["i2"].metadata == {"n": 2} and at_v2["i2"].context == ["passage 2"]
    assert store.datasets.count_items("qa") == 4
    assert store.datasets.count_items("qa", 3) == 3
    assert store.datasets.get_item("qa", "i2", 1).expected_output == "answer 2"
    with pytest.raises(ItemNotFoundError, match="'i1'"):
        store.datasets.get_item("qa", "i1")
    with pytest.raises(DatasetVersionNotFoundError, match="no version 7"):
        list(store.datasets.items("qa", 7))


def test_items_offset_limit_and_chunked_streaming(store: Store) -> None:
    store.datasets.create("big")
    store.datasets.CHUNK = 7  # force many chunks through the keyset pagination
    store.datasets.add_items("big", items(50))
    store.datasets.delete_items("big", [f"i{n}" for n in range(0, 50, 5)])
    expected = [f"i{n}" for n in range(50) if n % 5]
    assert [i.id for i in store.datasets.items("big")] == expected
    assert [i.id for i in store.datasets.items("big", offset=3, limit=17)] == expected[3:20]
    assert [i.id for i in store.datasets.items("big", offset=38)] == expected[38:]
    assert [i.id for i in store.datasets.items("big", 1, offset=45)] == [
        f"i{n}" for n in range(45, 50)
    ]


def test_item_history_with_update_delete_and_readd(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(2))  # v1
    store.datasets.update_item("qa", "i0", output="stored output")  # v2
    store.datasets.delete_items("qa", ["i0"])  # v3
    store.datasets.add_items("qa", [Item(id="i0", input="back again")])  # v4
    history = store.datasets.item_history("qa", "i0")
    assert [(h.version, h.valid_to, h.deleted) for h in history] == [
        (1, 2, False),
        (2, 3, False),
        (3, 4, True),
        (4, None, False),
    ]
    assert history[1].item is not None and history[1].item.output == "stored output"
    assert history[2].item is None
    assert history[3].item is not None and history[3].item.input == "back again"
    assert [i.id for i in store.datasets.items("qa", 3)] == ["i1"]
    assert [i.id for i in store.datasets.items("qa")] == ["i1", "i0"]  # re-added at the end
    with pytest.raises(ItemNotFoundError, match="no item 'nope'"):
        store.datasets.item_history("qa", "nope")


def _failing_rows(good: int) -> Iterator[Item]:
    yield from items(good)
    raise ValueError("line 7: field 'input' is missing")


def test_add_items_is_all_or_nothing_when_the_iterable_raises(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(3, prefix="keep"))
    before = row_counts(store)
    store.datasets.CHUNK = 4  # the failure comes after several chunks were inserted
    with pytest.raises(ValueError, match="line 7"):
        store.datasets.add_items("qa", _failing_rows(good=10))
    assert row_counts(store) == before
    info = store.datasets.get("qa")
    assert (info.version, info.item_count) == (1, 3)
    assert [i.id for i in store.datasets.items("qa")] == ["keep0", "keep1", "keep2"]


def test_add_items_validates_mappings_and_rolls_back(store: Store) -> None:
    store.datasets.create("qa")
    rows: list[object] = [{"id": "a", "input": "x"}, {"id": "b"}]  # b has neither input nor output
    with pytest.raises(ValidationError):
        store.datasets.add_items("qa", rows)  # type: ignore[arg-type]
    assert row_counts(store) == (0, 1)
    assert store.datasets.add_items("qa", [{"id": "a", "input": "x"}]) == 1


def test_duplicate_ids_are_refused_naming_the_id(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(3))
    before = row_counts(store)
    with pytest.raises(DuplicateItemError, match=r"'i1'.*already an item"):
        store.datasets.add_items("qa", items(1, start=5) + items(1, start=1))
    store.datasets.CHUNK = 2  # the repeat lands in a later chunk than the first copy
    with pytest.raises(DuplicateItemError, match=r"'x2'.*more than once"):
        store.datasets.add_items("qa", items(4, prefix="x") + items(1, start=2, prefix="x"))
    with pytest.raises(DuplicateItemError, match=r"'y0'.*more than once"):
        store.datasets.add_items("qa", [Item(id="y0", input=1), Item(id="y0", input=2)])
    assert row_counts(store) == before


def test_update_and_delete_errors_change_nothing(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(2))
    before = row_counts(store)
    with pytest.raises(ItemNotFoundError, match="dataset 'qa' has no item 'zz'"):
        store.datasets.update_item("qa", "zz", input="x")
    with pytest.raises(ValueError, match="cannot update field"):
        store.datasets.update_item("qa", "i0", id="other")
    with pytest.raises(ValidationError):
        store.datasets.update_item("qa", "i0", input=None)  # an item needs input or output
    with pytest.raises(ItemNotFoundError, match="'zz'"):
        store.datasets.delete_items("qa", ["i0", "zz"])
    assert row_counts(store) == before
    assert store.datasets.get("qa").version == 1
    assert store.datasets.add_items("qa", []) == 1  # nothing to add: no new version
    assert store.datasets.delete_items("qa", []) == 1


def test_delete_dataset_removes_its_rows(store: Store) -> None:
    store.datasets.create("gone")
    store.datasets.add_items("gone", items(5))
    store.datasets.delete("gone")
    assert row_counts(store) == (0, 0)


def test_existing_ids_are_refused_naming_the_first_few(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(8))
    before = row_counts(store)
    with pytest.raises(DuplicateItemError) as caught:
        store.datasets.add_items("qa", items(2, start=20) + items(8))
    message = str(caught.value)
    assert "'i0', 'i1', 'i2', 'i3', 'i4' and 3 more" in message
    assert "in dataset 'qa': they are already items" in message
    assert "update_item" not in message and "(" not in message  # no Python method names
    assert caught.value.item_ids == [f"i{n}" for n in range(8)]  # type: ignore[attr-defined]
    assert row_counts(store) == before


def test_upsert_versions_changed_items_keeps_unchanged_adds_new_in_one_version(
    store: Store,
) -> None:
    store.datasets.create("qa")
    store.datasets.add_items(  # v1
        "qa",
        [
            Item(id="a", input="qa", expected_output="A", metadata={"x": 1, "y": [1.5, True]}),
            Item(id="b", input={"k": 1, "j": 2}, expected_output=3),
            Item(id="c", input="qc", expected_output=True),
            Item(id="d", input="qd"),
            Item(id="e", input="qe"),
        ],
    )
    store.datasets.delete_items("qa", ["e"])  # v2: a tombstone
    store.datasets.CHUNK = 2  # the decisions span several chunks
    version = store.datasets.add_items(  # v3
        "qa",
        [
            # same JSON content, keys in another order (``1`` and ``1.0`` differ: stored
            # exactly, test_json_exact.py)
            Item(id="a", input="qa", expected_output="A", metadata={"y": [1.5, True], "x": 1}),
            Item(id="new", input="fresh"),
            Item(id="b", input={"j": 2, "k": 1}, expected_output=3),  # same JSON content
            Item(id="c", input="qc", expected_output=1),  # true -> 1 is a change
            Item(id="d", input="qd", expected_output="now with an answer"),
            Item(id="e", input="back"),  # deleted earlier: added again
        ],
        on_existing="upsert",
        note="upsert",
    )
    assert version == 3
    last = store.datasets.versions("qa")[-1]
    assert (last.version, last.added, last.updated, last.deleted, last.item_count) == (
        3,
        2,
        2,
        0,
        6,
    )
    assert last.note == "upsert"
    assert [i.id for i in store.datasets.items("qa")] == ["a", "b", "c", "d", "new", "e"]
    assert store.datasets.get_item("qa", "d").expected_output == "now with an answer"
    assert store.datasets.get_item("qa", "d", 2).expected_output is None
    assert store.datasets.get_item("qa", "c").expected_output == 1
    history = {
        item_id: [
            (h.version, h.valid_to, h.deleted) for h in store.datasets.item_history("qa", item_id)
        ]
        for item_id in ("a", "b", "c", "d", "e", "new")
    }
    assert history == {
        "a": [(1, None, False)],  # unchanged: left alone
        "b": [(1, None, False)],
        "c": [(1, 3, False), (3, None, False)],
        "d": [(1, 3, False), (3, None, False)],  # keeps its position across the update
        "e": [(1, 2, False), (2, 3, True), (3, None, False)],
        "new": [(3, None, False)],
    }
    # the same file again: nothing changed, so no new version
    before = row_counts(store)
    assert store.datasets.add_items("qa", store.datasets.items("qa"), on_existing="upsert") == 3
    assert row_counts(store) == before


def test_skip_existing_adds_only_new_ids(store: Store) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(3))  # v1
    changed = [Item(id=f"i{n}", input="changed") for n in range(3)]
    version = store.datasets.add_items("qa", [*changed, *items(2, start=3)], on_existing="skip")
    assert version == 2
    last = store.datasets.versions("qa")[-1]
    assert (last.added, last.updated, last.item_count) == (2, 0, 5)
    assert store.datasets.get_item("qa", "i1").input == {"q": "question 1"}
    assert [h.version for h in store.datasets.item_history("qa", "i1")] == [1]
    assert store.datasets.add_items("qa", changed, on_existing="skip") == 2  # nothing new
    assert len(store.datasets.versions("qa")) == 3


@pytest.mark.parametrize("on_existing", ["upsert", "skip"])
def test_upsert_and_skip_refuse_an_id_twice_and_roll_back(store: Store, on_existing: str) -> None:
    store.datasets.create("qa")
    store.datasets.add_items("qa", items(3))
    before = row_counts(store)
    store.datasets.CHUNK = 2
    # i0 is left alone in the first chunk, then comes back (changed) two chunks later
    twice = [*items(1), Item(id="n1", input=1), Item(id="n2", input=2), Item(id="i0", input=9)]
    with pytest.raises(DuplicateItemError, match=r"'i0'.*more than once"):
        store.datasets.add_items("qa", twice, on_existing=on_existing)  # type: ignore[arg-type]
    # i1 is updated (or added, for a new id) in the first chunk and repeated later
    changed_twice = [Item(id="i1", input="x"), Item(id="n3", input=3), Item(id="i1", input="y")]
    with pytest.raises(DuplicateItemError, match=r"'(i1|n3)'.*more than once"):
        store.datasets.add_items(
            "qa",
            [*changed_twice, Item(id="n3", input=3)],
            on_existing=on_existing,  # type: ignore[arg-type]
        )
    with pytest.raises(ValueError, match="line 7"):
        store.datasets.add_items(
            "qa",
            _failing_rows(good=5),
            on_existing=on_existing,  # type: ignore[arg-type]
        )
    assert row_counts(store) == before
    assert store.datasets.get("qa").version == 1
    with pytest.raises(ValueError, match="on_existing must be one of error, upsert, skip"):
        store.datasets.add_items("qa", items(1), on_existing="replace")  # type: ignore[arg-type]


def test_awkward_ids_and_values_round_trip_and_upsert_unchanged(store: Store) -> None:
    """Tabs, newlines, backslashes, NUL and the NUL escape character in ids and JSON (the
    PostgreSQL path writes rows with COPY, which has its own escaping)."""
    awkward = [
        Item(id="tab\there", input="line\nbreak\\back\tslash", context=None),
        Item(id="nul\x00id", input="x\x00y", metadata={"k\x00": ["v\uf8ff"]}),
        Item(id="esc\uf8ffid", output=None, input={"nested": [None, "\\N", ""]}),
        Item(id="\\N", input="\\N", expected_output=None),
    ]
    store.datasets.create("odd")
    assert store.datasets.add_items("odd", awkward) == 1
    assert list(store.datasets.items("odd")) == awkward
    assert store.datasets.add_items("odd", awkward, on_existing="upsert") == 1  # unchanged
    with store.engine.connect() as conn:
        nulls = conn.execute(
            sa.select(sa.func.count()).where(dataset_items.c.context.is_(None))
        ).scalar()
    assert nulls == 4  # None is SQL NULL, not JSON null


def test_rename_moves_the_runs_with_it_and_refuses_a_taken_name(store: Store) -> None:
    from tests.store.test_runs import run_info

    ds = store.datasets.create("qa/v1", description="kept")
    store.datasets.add_items("qa/v1", items(2))
    other = store.datasets.create("other")
    run_id, other_run = "on-qa", "on-other"
    store.runs.create(run_info(run_id, dataset_id=ds.id, dataset_name="qa/v1"))
    store.runs.create(run_info(other_run, dataset_id=other.id, dataset_name="other"))

    renamed = store.datasets.rename("qa/v1", "  qa?v2 #x ")
    assert renamed.name == "qa?v2 #x" and renamed.description == "kept"
    assert renamed.item_count == 2 and renamed.version == 1
    assert [i.id for i in store.datasets.items("qa?v2 #x")] == ["i0", "i1"]
    with pytest.raises(DatasetNotFoundError):
        store.datasets.get("qa/v1")
    assert store.runs.get(run_id).info.dataset_name == "qa?v2 #x"
    assert store.runs.get(other_run).info.dataset_name == "other"

    with pytest.raises(DatasetExistsError, match="'other' already exists"):
        store.datasets.rename("qa?v2 #x", "other")
    assert store.datasets.rename("other", "other").name == "other"  # its own name: no-op
    with pytest.raises(DatasetNotFoundError):
        store.datasets.rename("nope", "fresh")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("  ", "is empty"),
        ("..", "cannot be addressed in a URL"),
        (" . ", "cannot be addressed in a URL"),
        ("tab\there", "control characters"),
        ("x" * 256, "longer than 255"),
    ],
)
def test_a_name_no_url_can_reach_is_refused_at_creation_and_rename(
    store: Store, name: str, why: str
) -> None:
    from assay.store.errors import InvalidDatasetNameError

    with pytest.raises(InvalidDatasetNameError, match=why):
        store.datasets.create(name)
    store.datasets.create("fine")
    with pytest.raises(InvalidDatasetNameError, match=why):
        store.datasets.rename("fine", name)
    assert [d.name for d in store.datasets.list()] == ["fine"]


@pytest.mark.parametrize("item_id", [".", ".."])
def test_an_item_id_no_url_can_reach_is_refused_and_nothing_is_written(
    store: Store, item_id: str
) -> None:
    """An ``Item`` built in Python skips the row checks of an import: the store refuses it
    itself, in one line, and the batch it came in is not stored."""
    store.datasets.create("ds")
    store.datasets.add_items("ds", items(2))
    before = row_counts(store)
    batch = [*items(1, start=5), Item(id=item_id, input="q")]
    with pytest.raises(InvalidItemIdError) as info:
        store.datasets.add_items("ds", batch)
    assert str(info.value) == f"item id {item_id!r} cannot be addressed in a URL: choose another id"
    assert row_counts(store) == before
    assert store.datasets.get("ds").version == 1
    with pytest.raises(InvalidItemIdError):  # a mapping: the same rule
        store.datasets.add_items("ds", [{"id": item_id, "input": "q"}])
    assert [i.id for i in store.datasets.items("ds")] == ["i0", "i1"]
