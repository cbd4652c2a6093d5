from __future__ import annotations

import csv
from pathlib import Path

import pytest

from assay.datasets import DatasetImportError, read_items, write_items
from assay.types import Item


def _write_csv(path: Path, rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_round_trip_of_strings_lists_dicts(tmp_path: Path, items: list[Item]) -> None:
    path = tmp_path / "d.csv"
    assert write_items(items, path) == len(items)
    assert list(read_items(path)) == items


def test_gzip_round_trip(tmp_path: Path, items: list[Item]) -> None:
    path = tmp_path / "d.csv.gz"
    write_items(items, path)
    assert list(read_items(path)) == items


def test_documented_lossiness(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    write_items([Item(id="a", input="", output="[1, 2]", expected_output=42)], path)
    (back,) = read_items(path)
    # JSON-looking text -> parsed, numbers -> text (an empty string stays one)
    assert (back.input, back.output, back.expected_output) == ("", [1, 2], "42")


FORMULA_LIKE = [
    "=1+1",
    "+SUM(A1)",
    "-2+3",
    "@cmd",
    "\tTAB",
    "\rCR",
    "'=already quoted",
    "''@",
    '""',
    '\'""',
    "'plain apostrophe",
    "'",
    "a = b",
    "",
    " =x",
]


def test_empty_and_formula_like_texts_round_trip_and_are_neutralised(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    items = [
        Item(id=f"=id{n}", input=text, output=text, expected_output=text)
        for n, text in enumerate(FORMULA_LIKE)
    ]
    items.append(Item(id="none", input="q", output=None, expected_output=None))
    write_items(items, path)
    back = list(read_items(path))
    assert [(i.id, i.input, i.output, i.expected_output) for i in back] == [
        (i.id, i.input, i.output, i.expected_output) for i in items
    ]
    with path.open(newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    # what a spreadsheet opens: no cell starts like a formula
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=1+1" in cells and "''=already quoted" in cells and '""' in cells


def test_json_cells_empty_cells_and_extra_columns(tmp_path: Path) -> None:
    path = _write_csv(
        tmp_path / "d.csv",
        [
            ["id", "input", "context", "metadata", "lang", "note"],
            ["a", '{"q": 1}', '["p1", "p2"]', '{"k": "v"}', "en", ""],
            ["b", "[citation needed] text", "", "", "[1]", "x"],
        ],
    )
    a, b = read_items(path)
    assert a == Item(
        id="a",
        input={"q": 1},
        context=["p1", "p2"],
        metadata={"k": "v", "lang": "en", "note": None},
    )
    # text that merely starts with a bracket stays text; extra columns are never JSON-parsed
    assert b == Item(id="b", input="[citation needed] text", metadata={"lang": "[1]", "note": "x"})


def test_mapping(tmp_path: Path) -> None:
    path = _write_csv(
        tmp_path / "d.csv", [["question", "answer", "src"], ["q1", "a1", "s"], ["q2", "a2", "t"]]
    )
    got = list(read_items(path, mapping=["input=question", "expected_output=answer"]))
    assert got == [
        Item(id="1", input="q1", expected_output="a1", metadata={"src": "s"}),
        Item(id="2", input="q2", expected_output="a2", metadata={"src": "t"}),
    ]


def test_header_is_line_1_and_first_record_line_2(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "d.csv", [["id", "input", "output"], ["a", "", ""]])
    with pytest.raises(DatasetImportError) as info:
        list(read_items(path))
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}: line 2: field 'input': ")


def test_multiline_cells_keep_line_numbers_right(tmp_path: Path) -> None:
    rows = [["id", "input", "metadata"]]
    rows += [[f"r{i}", "line one\nline two", ""] for i in range(3)]  # lines 2-3, 4-5, 6-7
    rows += [["bad", "q", "not json"]]  # line 8
    path = _write_csv(tmp_path / "d.csv", rows)
    with pytest.raises(DatasetImportError) as info:
        list(read_items(path))
    assert (info.value.line, info.value.field) == (8, "metadata")


def test_blank_lines_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,input\n\na,q\n\nb,\n", encoding="utf-8")
    with pytest.raises(DatasetImportError) as info:
        list(read_items(path))
    assert info.value.line == 5


def test_too_many_cells(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "d.csv", [["id", "input"], ["a", "q"], ["b", "q", "extra"]])
    with pytest.raises(DatasetImportError, match=r"line 3: 3 cells but the header has 2"):
        list(read_items(path))


def test_a_short_row_is_an_error_naming_its_line_and_bom_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes("\ufeffid,input,expected_output\na,q,Q\nb,q\n".encode())
    with pytest.raises(DatasetImportError, match="line 3: 2 cells but the header has 3 columns"):
        list(read_items(path))
    path.write_bytes("\ufeffid,input,expected_output\na,q,\n".encode())
    assert list(read_items(path)) == [Item(id="a", input="q")]


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "the file is empty"), (b"id,input\n", "header but no records")],
)
def test_an_empty_file_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(content)
    with pytest.raises(DatasetImportError, match=message):
        list(read_items(path))


def test_a_non_utf8_file_names_the_line_and_encoding_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("id,input\na,plain\nb,caf\u00e9\n".encode("cp1252"))
    with pytest.raises(DatasetImportError) as raised:
        list(read_items(path))
    text = str(raised.value)
    assert "latin.csv" in text and "line 3" in text and "byte 0xe9" in text
    assert "--encoding" in text
    assert [i.input for i in read_items(path, encoding="cp1252")] == ["plain", "café"]


def test_duplicate_header_names(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "d.csv", [["input", "input"], ["a", "b"]])
    with pytest.raises(DatasetImportError, match="line 1: duplicate column names: input"):
        list(read_items(path))
