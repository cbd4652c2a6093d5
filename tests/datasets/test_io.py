from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.datasets import DatasetError, detect_format, read_items, write_items
from assay.types import Item


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.jsonl", "jsonl"),
        ("a.ndjson", "jsonl"),
        ("a.JSONL.gz", "jsonl"),
        ("a.csv", "csv"),
        ("a.csv.gz", "csv"),
        ("a.parquet", "parquet"),
        ("a.pq", "parquet"),
    ],
)
def test_detect_from_extension(name: str, fmt: str) -> None:
    assert detect_format(name) == fmt


def test_detect_directory_and_extensionless_write_target(tmp_path: Path) -> None:
    assert detect_format(tmp_path) == "hf"
    assert detect_format(tmp_path / "new_ds", writing=True) == "hf"
    with pytest.raises(DatasetError, match="cannot tell the format"):
        detect_format(tmp_path / "new_ds")


def test_explicit_format_overrides_extension(tmp_path: Path) -> None:
    path = tmp_path / "data.txt"
    write_items([Item(id="a", input="q")], path, fmt="ndjson")
    assert list(read_items(path, fmt="jsonl")) == [Item(id="a", input="q")]
    with pytest.raises(DatasetError, match="cannot tell the format"):
        read_items(path)
    with pytest.raises(DatasetError, match="unknown dataset format 'xml'"):
        read_items(path, fmt="xml")


def test_json_hint_and_bad_gzip() -> None:
    with pytest.raises(DatasetError, match=r"JSON Lines files use \.jsonl"):
        detect_format("a.json")
    with pytest.raises(DatasetError, match=r"only \.jsonl\.gz and \.csv\.gz"):
        detect_format("a.parquet.gz")


def test_eager_checks(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        read_items(tmp_path / "missing.jsonl")
    path = tmp_path / "d.jsonl"
    path.write_text('{"input": "q"}\n')
    with pytest.raises(DatasetError, match="split applies only"):
        read_items(path, split="train")
    with pytest.raises(DatasetError, match="not an Item field"):
        read_items(path, mapping=["prompt=q"])


@pytest.mark.parametrize("name", ["d.jsonl", "d.csv", "d.parquet", "d_hf"])
def test_failed_write_leaves_previous_file(tmp_path: Path, items: list[Item], name: str) -> None:
    path = tmp_path / name
    write_items(items, path)

    def failing() -> Iterator[Item]:
        yield items[0]
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError, match="source broke"):
        write_items(failing(), path)
    assert list(read_items(path)) == items
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temp files left


def test_unserialisable_value_is_a_clear_error(tmp_path: Path) -> None:
    bad = Item(id="x", input={"when": object()})
    for name in ("d.jsonl", "d.csv", "d.parquet"):
        with pytest.raises(DatasetError, match="'x'"):
            write_items([bad], tmp_path / name)
        assert not (tmp_path / name).exists()
