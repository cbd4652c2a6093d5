from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.datasets import DatasetError, DatasetImportError, load_items, write_items
from assay.types import Item


def test_list_of_dicts_and_items() -> None:
    item = Item(id="z", output="o")
    got = list(load_items([{"input": "a"}, {"id": "b", "input": "b", "lang": "en"}, item]))
    assert got == [Item(id="1", input="a"), Item(id="b", input="b", metadata={"lang": "en"}), item]


def test_mapping_applies_to_dicts() -> None:
    got = list(load_items([{"q": "a", "a": "b"}], mapping={"input": "q", "expected_output": "a"}))
    assert got == [Item(id="1", input="a", expected_output="b")]


def test_path_source(tmp_path: Path, items: list[Item]) -> None:
    path = tmp_path / "d.parquet"
    write_items(items, path)
    assert list(load_items(path)) == items
    assert list(load_items(str(path))) == items


def test_bad_dict_is_located_by_index() -> None:
    with pytest.raises(DatasetImportError) as info:
        list(load_items([{"input": "a"}, {"input": "b"}, {"expected_output": "c"}]))
    assert str(info.value) == "data[2]: field 'input': an item needs 'input' or 'output'"


@pytest.mark.parametrize("item_id", [".", ".."])
def test_an_item_built_in_python_with_an_id_no_url_can_reach_is_refused(item_id: str) -> None:
    """As a row with that id is: one line naming the item, whatever built it."""
    entries = [Item(id="ok", input="a"), Item(id=item_id, input="b")]
    with pytest.raises(DatasetImportError) as info:
        list(load_items(entries))
    assert str(info.value) == (
        f"data[1]: field 'id': {item_id!r} cannot be addressed in a URL: choose another id"
    )
    assert [i.id for i in load_items([Item(id="./..", input="a")])] == ["./.."]


@pytest.mark.parametrize("entry", [5, "text", None])
def test_entries_must_be_dicts_or_items(entry: Any) -> None:
    with pytest.raises(DatasetImportError, match=r"data\[1\]: expected a dict or an Item"):
        list(load_items([{"input": "a"}, entry]))


@pytest.mark.parametrize("source", [{"input": "a"}, Item(id="a", input="q"), 42, b"x"])
def test_source_must_be_a_path_or_a_list(source: Any) -> None:
    with pytest.raises(DatasetError, match="data must be a path or a list"):
        load_items(source)


def test_duplicate_ids_are_refused_unless_allowed() -> None:
    data = [{"id": "a", "input": "1"}, {"id": "b", "input": "2"}, {"id": "a", "input": "3"}]
    with pytest.raises(DatasetImportError, match="duplicate id 'a' \\(items 1 and 3"):
        list(load_items(data))
    assert len(list(load_items(data, unique_ids=False))) == 3


def test_format_options_need_a_path() -> None:
    with pytest.raises(DatasetError, match="only when data is a path"):
        load_items([{"input": "a"}], split="train")
