from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.datasets import DatasetError, DatasetImportError, read_items, write_items
from assay.datasets.formats import parquet as parquet_format
from assay.types import Item


def test_round_trip_is_exact(tmp_path: Path, items: list[Item], tricky_items: list[Item]) -> None:
    path = tmp_path / "d.parquet"
    assert write_items(items + tricky_items, path) == len(items) + len(tricky_items)
    assert list(read_items(path)) == items + tricky_items


def test_plain_text_stays_readable_in_the_file(tmp_path: Path, tricky_items: list[Item]) -> None:
    path = tmp_path / "d.parquet"
    write_items([Item(id="a", input="What?", expected_output="42", context=["p"])], path)
    row = pq.read_table(path).to_pylist()[0]
    assert row["input"] == "What?"  # ordinary text is stored as-is
    assert row["expected_output"] == '"42"'  # text that is JSON is quoted to stay unambiguous
    assert row["context"] == '["p"]'
    assert row["metadata"] is None


def test_written_in_row_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parquet_format, "WRITE_BATCH_ROWS", 100)
    path = tmp_path / "d.parquet"
    many = [Item(id=str(i), input=f"q{i}") for i in range(1050)]
    write_items(many, path)
    assert pq.ParquetFile(path).num_row_groups == 11
    assert list(read_items(path)) == many


def test_error_reports_row_number_across_batches(tmp_path: Path) -> None:
    n = 5000  # more than one read batch
    inputs: list[str | None] = [f"q{i}" for i in range(n)]
    inputs[4321] = None
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"input": inputs}), path, row_group_size=1000)
    with pytest.raises(DatasetImportError) as info:
        list(read_items(path))
    assert (info.value.row, info.value.field) == (4322, "input")
    assert str(info.value).startswith(f"{path}: row 4322: field 'input': ")


def test_foreign_file_with_native_types_and_mapping(tmp_path: Path) -> None:
    table = pa.table(
        {
            "question": ["q1", "q2"],
            "answer": [1, 2],
            "passages": [["a", "b"], []],
            "meta": [{"topic": "x"}, {"topic": "y"}],
            "id": [10, 11],
        }
    )
    path = tmp_path / "foreign.parquet"
    pq.write_table(table, path)
    got = list(
        read_items(
            path,
            mapping=[
                "input=question",
                "expected_output=answer",
                "context=passages",
                "metadata.topic=meta.topic",
            ],
        )
    )
    assert got == [
        Item(id="10", input="q1", expected_output=1, context=["a", "b"], metadata={"topic": "x"}),
        Item(id="11", input="q2", expected_output=2, context=[], metadata={"topic": "y"}),
    ]


def test_not_a_parquet_file_fails_early(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    path.write_text("nope")
    with pytest.raises(DatasetError, match="not a readable Parquet file"):
        read_items(path)
