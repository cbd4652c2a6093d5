"""Import/export against a real SQLite store file."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.datasets import DatasetImportError, write_items
from assay.operations.datasets import export_file, import_file
from assay.store import DatasetNotFoundError, DuplicateItemError, Store, open_store
from assay.types import Item

TABLES = ("datasets", "dataset_versions", "dataset_items")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "assay.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with open_store(str(db_path)) as opened:
        yield opened


def _row_counts(db_path: Path) -> dict[str, int]:
    """Counted with plain sqlite3, independently of the store's own read path."""
    with sqlite3.connect(db_path) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _good_rows(n: int, prefix: str = "r") -> list[dict[str, object]]:
    return [{"id": f"{prefix}{i}", "input": f"q{i}", "expected_output": f"a{i}"} for i in range(n)]


def test_successful_import_creates_one_version(store: Store, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "data.jsonl", _good_rows(10))
    info, count = import_file(store, path, dataset="qa")
    assert count == 10
    assert (info.name, info.version, info.item_count) == ("qa", 1, 10)
    versions = store.datasets.versions("qa")
    assert [v.version for v in versions] == [0, 1]  # 0 is the (empty) creation
    assert (versions[-1].added, versions[-1].note) == (10, "import data.jsonl")
    assert [i.id for i in store.datasets.items("qa")] == [f"r{i}" for i in range(10)]


def test_malformed_line_7_leaves_a_new_database_unchanged(
    store: Store, db_path: Path, tmp_path: Path
) -> None:
    rows = _good_rows(3000)  # several insert chunks go in before the bad line is reached
    rows[2500] = {"id": "bad", "expected_output": "no input"}
    rows.insert(6, {"id": "bad7", "input": "q", "metadata": "not an object"})
    before = _row_counts(db_path)
    with pytest.raises(DatasetImportError) as info:
        import_file(store, _jsonl(tmp_path / "data.jsonl", rows), dataset="qa")
    assert (info.value.line, info.value.field) == (7, "metadata")
    assert "data.jsonl: line 7: field 'metadata'" in str(info.value)
    assert _row_counts(db_path) == before == dict.fromkeys(TABLES, 0)
    assert store.datasets.list() == []


def test_late_bad_row_rolls_back_an_existing_dataset(
    store: Store, db_path: Path, tmp_path: Path
) -> None:
    import_file(store, _jsonl(tmp_path / "first.jsonl", _good_rows(5)), dataset="qa")
    before = _row_counts(db_path)
    info_before = store.datasets.get("qa")
    rows = _good_rows(2500, prefix="n")
    rows[2400] = {"id": "late", "output": None}
    with pytest.raises(DatasetImportError) as info:
        import_file(store, _jsonl(tmp_path / "second.jsonl", rows), dataset="qa")
    assert info.value.line == 2401
    assert _row_counts(db_path) == before
    assert store.datasets.get("qa") == info_before
    assert store.datasets.count_items("qa") == 5


def test_duplicate_ids_roll_back(store: Store, db_path: Path, tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [*_good_rows(3), {"id": "r1", "input": "again"}]
    with pytest.raises(DuplicateItemError):
        import_file(store, _jsonl(tmp_path / "dup.jsonl", rows), dataset="qa")
    assert _row_counts(db_path) == dict.fromkeys(TABLES, 0)


def test_reimport_existing_ids_error_skip_existing_and_upsert(
    store: Store, db_path: Path, tmp_path: Path
) -> None:
    import_file(store, _jsonl(tmp_path / "v1.jsonl", _good_rows(5)), dataset="qa")
    rows = _good_rows(5)
    rows[3]["expected_output"] = "fixed"
    rows += [{"id": "new1", "input": "n1"}, {"id": "new2", "input": "n2"}]
    again = _jsonl(tmp_path / "again.jsonl", rows)
    before = _row_counts(db_path)
    with pytest.raises(DuplicateItemError) as caught:
        import_file(store, again, dataset="qa")
    assert "'r0', 'r1', 'r2', 'r3', 'r4' in dataset 'qa'" in str(caught.value)
    with pytest.raises(ValueError, match="not both"):
        import_file(store, again, dataset="qa", upsert=True, skip_existing=True)
    assert _row_counts(db_path) == before

    info, count = import_file(store, again, dataset="qa", skip_existing=True)
    assert (count, info.version, info.item_count) == (7, 2, 7)
    v2 = store.datasets.versions("qa")[-1]
    assert (v2.added, v2.updated, v2.note) == (2, 0, "import again.jsonl")
    assert store.datasets.get_item("qa", "r3").expected_output == "a3"

    info, count = import_file(store, again, dataset="qa", upsert=True)
    assert (count, info.version, info.item_count) == (7, 3, 7)
    v3 = store.datasets.versions("qa")[-1]
    assert (v3.added, v3.updated) == (0, 1)
    assert store.datasets.get_item("qa", "r3").expected_output == "fixed"
    assert [(h.version, h.valid_to) for h in store.datasets.item_history("qa", "r3")] == [
        (1, 3),
        (3, None),
    ]
    assert [i.id for i in store.datasets.items("qa")] == [
        *(f"r{i}" for i in range(5)),
        "new1",
        "new2",
    ]
    info, _ = import_file(store, again, dataset="qa", upsert=True)  # nothing left to change
    assert info.version == 3


def test_no_create_needs_an_existing_dataset(store: Store, db_path: Path, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", _good_rows(2))
    with pytest.raises(DatasetNotFoundError):
        import_file(store, path, dataset="qa", create=False)
    assert _row_counts(db_path) == dict.fromkeys(TABLES, 0)
    store.datasets.create("qa")
    assert import_file(store, path, dataset="qa", create=False)[1] == 2


def test_import_csv_with_mapping(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("question,answer,src\nq1,a1,x\nq2,a2,y\n", encoding="utf-8")
    _, count = import_file(
        store, path, dataset="qa", mapping=["input=question", "expected_output=answer"]
    )
    assert count == 2
    assert list(store.datasets.items("qa")) == [
        Item(id="1", input="q1", expected_output="a1", metadata={"src": "x"}),
        Item(id="2", input="q2", expected_output="a2", metadata={"src": "y"}),
    ]


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet", "out_hf", "out.csv"])
def test_export_round_trip(
    store: Store, tmp_path: Path, items: list[Item], tricky_items: list[Item], name: str
) -> None:
    source = tmp_path / "in.parquet"
    data = items if name.endswith(".csv") else items + tricky_items  # CSV: see its docs
    write_items(data, source)
    import_file(store, source, dataset="qa")
    out = tmp_path / name
    assert export_file(store, "qa", out) == len(data)
    import_file(store, out, dataset="copy")
    assert list(store.datasets.items("copy")) == data


def test_export_a_pinned_version(store: Store, tmp_path: Path) -> None:
    import_file(store, _jsonl(tmp_path / "a.jsonl", _good_rows(3, "a")), dataset="qa")
    import_file(store, _jsonl(tmp_path / "b.jsonl", _good_rows(2, "b")), dataset="qa")
    out = tmp_path / "v1.jsonl"
    assert export_file(store, "qa", out, version=1) == 3
    assert export_file(store, "qa", tmp_path / "latest.jsonl") == 5
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a0", "a1", "a2"]


def test_export_of_missing_dataset_creates_no_file(store: Store, tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError):
        export_file(store, "nope", tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()
