from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from assay.datasets import DatasetImportError, read_items, write_items
from assay.types import Item


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_round_trip(tmp_path: Path, items: list[Item], tricky_items: list[Item]) -> None:
    path = tmp_path / "data.jsonl"
    assert write_items(items + tricky_items, path) == len(items) + len(tricky_items)
    assert list(read_items(path)) == items + tricky_items


def test_gzip_round_trip(tmp_path: Path, items: list[Item]) -> None:
    path = tmp_path / "data.jsonl.gz"
    write_items(items, path)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        assert json.loads(fh.readline())["id"] == "capital"
    assert list(read_items(path)) == items


def test_writer_omits_none_and_empty_metadata(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    write_items([Item(id="a", input="q")], path)
    assert json.loads(path.read_text()) == {"id": "a", "input": "q"}


def test_line_7_error_names_line_and_field(tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"r{i}", "input": f"q{i}"}) for i in range(1, 11)]
    lines[6] = json.dumps({"id": "r7", "expected_output": "no input or output"})
    path = _write_lines(tmp_path / "data.jsonl", lines)
    seen: list[str] = []
    with pytest.raises(DatasetImportError) as info:
        seen.extend(item.id for item in read_items(path))
    assert seen == [f"r{i}" for i in range(1, 7)]  # streamed: the first six came through
    err = info.value
    assert (err.line, err.field) == (7, "input")
    assert str(err) == f"{path}: line 7: field 'input': an item needs 'input' or 'output'"


def test_bad_metadata_on_line_7(tmp_path: Path) -> None:
    lines = [json.dumps({"input": "q"})] * 6 + [json.dumps({"input": "q", "metadata": 5})]
    with pytest.raises(DatasetImportError, match=r"line 7: field 'metadata': expected a JSON"):
        list(read_items(_write_lines(tmp_path / "d.jsonl", lines)))


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "d.jsonl", ['{"input": "a"}', "", "   ", '{"input": "b"}', "[1]"]
    )
    with pytest.raises(DatasetImportError) as info:
        list(read_items(path))
    assert info.value.line == 5
    assert "expected a JSON object, got list" in str(info.value)
    path = _write_lines(tmp_path / "ok.jsonl", ['{"input": "a"}', "", '{"input": "b"}'])
    # ids are row ordinals, not line numbers: blank lines do not shift them
    assert [i.id for i in read_items(path)] == ["1", "2"]


def test_invalid_json_is_located(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", ['{"input": "a"}', '{"input": '])
    with pytest.raises(DatasetImportError, match=r"d\.jsonl: line 2: invalid JSON"):
        list(read_items(path))


def test_mapping_and_missing_column(tmp_path: Path) -> None:
    rows = [{"question": f"q{i}", "answer": f"a{i}", "meta": {"topic": "t"}} for i in range(8)]
    rows[6] = {"prompt": "oops", "answer": "a"}
    path = _write_lines(tmp_path / "d.jsonl", [json.dumps(r) for r in rows])
    mapping = ["input=question", "expected_output=answer", "metadata.topic=meta.topic"]
    got = read_items(path, mapping=mapping)
    first = next(got)
    assert first == Item(id="1", input="q0", expected_output="a0", metadata={"topic": "t"})
    with pytest.raises(DatasetImportError) as info:
        list(got)
    assert (info.value.line, info.value.field, info.value.column) == (7, "input", "question")


def test_an_empty_jsonl_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DatasetImportError, match="the file is empty"):
        list(read_items(path))


def test_a_non_utf8_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a", "input": "ok"}\n{"id": "b", "input": "caf\xe9"}\n')
    with pytest.raises(DatasetImportError, match=r"bad.jsonl: line 2: not valid utf-8"):
        list(read_items(path))
    items = list(read_items(path, encoding="latin-1"))
    assert items[1].input == "café"
