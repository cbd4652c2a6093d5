"""The Hugging Face layout is checked against the real ``datasets`` package both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

import datasets  # a dev dependency: the real HF package checks our layout both ways
from assay.datasets import DatasetError, DatasetImportError, read_items, write_items
from assay.types import ITEM_FIELDS, Item


@pytest.fixture(autouse=True)
def _quiet_datasets() -> None:
    datasets.disable_progress_bars()


ROWS = [
    {"question": "What is 2+2?", "answer": "4", "meta": {"topic": "math"}, "ctx": ["arith"]},
    {"question": "Capital of France?", "answer": "Paris", "meta": {"topic": "geo"}, "ctx": []},
    {"question": "Boiling point?", "answer": "100", "meta": {"topic": "sci"}, "ctx": ["w"]},
]
MAPPING = ["input=question", "expected_output=answer", "context=ctx", "metadata.topic=meta.topic"]


def _expected() -> list[Item]:
    return [
        Item(
            id=str(i),
            input=r["question"],
            expected_output=r["answer"],
            context=r["ctx"],
            metadata={"topic": r["meta"]["topic"]},  # type: ignore[index]
        )
        for i, r in enumerate(ROWS, 1)
    ]


def test_reads_a_dataset_saved_by_datasets(tmp_path: Path) -> None:
    path = tmp_path / "saved"
    datasets.Dataset.from_list(ROWS).save_to_disk(str(path))
    assert list(read_items(path, mapping=MAPPING)) == _expected()


def test_reads_all_shards_in_order(tmp_path: Path) -> None:
    rows = [{"input": f"q{i}", "id": f"i{i}"} for i in range(30)]
    rows[25]["input"] = None  # type: ignore[assignment]
    path = tmp_path / "sharded"
    datasets.Dataset.from_list(rows).save_to_disk(str(path), num_shards=3)
    assert len(list(path.glob("*.arrow"))) == 3
    got = read_items(path)
    assert [next(got).id for _ in range(25)] == [f"i{i}" for i in range(25)]
    with pytest.raises(DatasetImportError) as info:
        next(got)
    assert (info.value.row, info.value.field) == (26, "input")


def test_dataset_dict_needs_a_split(tmp_path: Path) -> None:
    path = tmp_path / "dd"
    ds = datasets.Dataset.from_list(ROWS)
    datasets.DatasetDict({"train": ds, "test": ds.select([0])}).save_to_disk(str(path))
    with pytest.raises(DatasetError, match="DatasetDict with splits train, test: pass --split"):
        read_items(path, mapping=MAPPING)
    with pytest.raises(DatasetError, match=r"no split 'dev' \(splits: train, test\)"):
        read_items(path, split="dev")
    assert list(read_items(path, split="test", mapping=MAPPING)) == _expected()[:1]
    assert len(list(read_items(path, split="train", mapping=MAPPING))) == 3


def test_split_on_a_single_dataset(tmp_path: Path) -> None:
    path = tmp_path / "single"
    datasets.Dataset.from_list(ROWS).save_to_disk(str(path))
    with pytest.raises(DatasetError, match="single Dataset without splits"):
        read_items(path, split="train")


def test_writer_output_loads_with_datasets(
    tmp_path: Path, items: list[Item], tricky_items: list[Item]
) -> None:
    path = tmp_path / "export"
    assert write_items(items + tricky_items, path) == len(items) + len(tricky_items)
    loaded = datasets.load_from_disk(str(path))
    assert isinstance(loaded, datasets.Dataset)
    assert loaded.num_rows == len(items) + len(tricky_items)
    assert tuple(loaded.column_names) == ITEM_FIELDS
    first = loaded[0]
    assert (first["id"], first["input"], first["expected_output"]) == (
        "capital",
        "What is the capital of France?",
        "Paris",
    )
    assert list(read_items(path)) == items + tricky_items


def test_round_trip_survives_a_datasets_transform(tmp_path: Path, tricky_items: list[Item]) -> None:
    path = tmp_path / "export"
    write_items(tricky_items, path)
    transformed = datasets.load_from_disk(str(path)).map(lambda r: {"id": "x" + r["id"]})
    transformed.save_to_disk(str(tmp_path / "again"))
    back = list(read_items(tmp_path / "again"))
    assert back == [item.model_copy(update={"id": "x" + item.id}) for item in tricky_items]


def test_writer_replaces_a_saved_dataset_but_not_other_directories(
    tmp_path: Path, items: list[Item]
) -> None:
    path = tmp_path / "export"
    write_items(items, path)
    write_items(items[:1], path)
    assert list(read_items(path)) == items[:1]
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"x")
    with pytest.raises(DatasetError, match="refusing to overwrite"):
        write_items(items, other, fmt="hf")
    assert (other / "cat.jpg").exists()


def test_directory_that_is_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a Hugging Face dataset saved with save_to_disk"):
        read_items(tmp_path)
