from __future__ import annotations

import pytest

from assay.datasets import DatasetImportError
from assay.datasets.convert import row_to_item, rows_to_items
from assay.datasets.mapping import RowMapper
from assay.types import Item


def _one(row: dict[str, object], mapping: list[str] | None = None, ordinal: int = 1) -> Item:
    return row_to_item(row, ordinal=ordinal, mapper=RowMapper(mapping), source="f", unit="line")


def test_missing_id_becomes_row_ordinal() -> None:
    rows: list[tuple[int, dict[str, object]]] = [
        (1, {"input": "a"}),
        (3, {"input": "b", "id": None}),
        (4, {"id": "z", "input": "c"}),
    ]
    items = list(rows_to_items(rows, source="f", unit="line"))
    assert [i.id for i in items] == ["1", "2", "z"]


def test_integer_id_is_stringified_but_bool_is_not() -> None:
    item = _one({"id": 7, "input": "a"})
    assert item.id == "7"
    with pytest.raises(DatasetImportError) as info:
        _one({"id": True, "input": "a"})
    assert info.value.field == "id"


def test_extras_merge_into_metadata_and_explicit_metadata_wins() -> None:
    item = _one({"input": "a", "metadata": {"k": 1}, "k": 2, "lang": "en"})
    assert item.metadata == {"k": 1, "lang": "en"}


def test_metadata_as_json_text_is_parsed() -> None:
    item = _one({"input": "a", "metadata": '{"k": [1]}'})
    assert item.metadata == {"k": [1]}


def test_metadata_sub_keys_override() -> None:
    item = _one(
        {"input": "a", "metadata": {"topic": "old", "n": 1}, "meta": {"topic": "new"}},
        ["metadata.topic=meta.topic", "metadata.deep.er=meta.topic"],
    )
    assert item.metadata == {"topic": "new", "n": 1, "deep": {"er": "new"}}


@pytest.mark.parametrize("item_id", [".", ".."])
def test_an_id_no_url_can_reach_is_refused_with_one_line(item_id: str) -> None:
    """Browsers drop "." and ".." from URLs (even as %2E): the item page would be gone."""
    with pytest.raises(DatasetImportError) as info:
        _one({"id": item_id, "input": "a"})
    assert info.value.field == "id"
    assert f"{item_id!r} cannot be addressed in a URL: choose another id" in str(info.value)
    assert _one({"id": "./..", "input": "a"}).id == "./.."  # escaped as one segment: fine


def test_metadata_not_an_object() -> None:
    with pytest.raises(DatasetImportError) as info:
        _one({"input": "a", "metadata": "[1, 2]"})
    assert info.value.field == "metadata"
    assert "expected a JSON object" in str(info.value)


def test_needs_input_or_output_is_reported_on_input() -> None:
    with pytest.raises(DatasetImportError) as info:
        row_to_item(
            {"expected_output": "x"},
            ordinal=1,
            mapper=RowMapper(),
            source="data.jsonl",
            unit="line",
            number=7,
        )
    assert str(info.value) == "data.jsonl: line 7: field 'input': an item needs 'input' or 'output'"
    assert info.value.line == 7
    assert info.value.row is None


def test_error_names_the_source_column_of_a_mapped_field() -> None:
    with pytest.raises(DatasetImportError) as info:
        row_to_item(
            {"key": ["not", "a", "string"], "q": "x"},
            ordinal=1,
            mapper=RowMapper(["id=key", "input=q"]),
            source="d.parquet",
            unit="row",
            number=12,
        )
    message = str(info.value)
    assert message.startswith("d.parquet: row 12: field 'id' (column 'key'): ")
    assert "valid string" in message
    assert info.value.row == 12


def test_missing_column_is_located() -> None:
    with pytest.raises(DatasetImportError) as info:
        list(
            rows_to_items(
                [(2, {"question": "q"}), (3, {"prompt": "p"})],
                source="d.csv",
                unit="line",
                mapper=RowMapper(["input=question"]),
            )
        )
    assert info.value.line == 3
    assert info.value.field == "input"
    assert info.value.column == "question"
    assert "column 'question' is missing" in str(info.value)


def test_index_location_rendering() -> None:
    err = DatasetImportError("boom", source="data", unit="index", number=3, field="id")
    assert str(err) == "data[3]: field 'id': boom"
