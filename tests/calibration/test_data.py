"""Labels, splits and pairwise items of a calibration."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.calibration.config import make_calibration_config
from assay.calibration.data import (
    CalibrationDataError,
    file_data_key,
    label_value,
    labelled_items,
    pairwise_run_items,
    split_test_ids,
)
from assay.types import Item


def _config(**raw: object) -> object:
    return make_calibration_config({"scorer": "x", "data": "d", **raw})


def test_label_paths_reach_fields_metadata_and_file_columns() -> None:
    item = Item(
        id="a", input="q", output="o", expected_output=3, metadata={"h": {"c": 4}, "col": 5}
    )
    assert label_value(item, "expected_output") == 3
    assert label_value(item, "metadata.h.c") == 4
    assert label_value(item, "col") == 5
    with pytest.raises(KeyError):
        label_value(item, "metadata.h.x")


def test_labels_are_mapped_and_checked_against_the_kind() -> None:
    items = [
        Item(id=f"i{k}", output="o", expected_output=v) for k, v in enumerate(["yes", "no", True])
    ]
    config = _config(kind="binary", label_map={"yes": 1, "no": 0})
    assert [e.label for e in labelled_items(items, config)] == [1.0, 0.0, 1.0]  # type: ignore[arg-type]
    with pytest.raises(CalibrationDataError, match=r"item 'i0'.*kind 'binary' needs 0 or 1"):
        labelled_items(
            [Item(id="i0", output="o", expected_output=3), items[1]], _config(kind="binary")
        )  # type: ignore[arg-type]
    with pytest.raises(CalibrationDataError, match=r"'i1'.*not a number"):
        labelled_items(
            [
                Item(id="i0", output="o", expected_output=1),
                Item(id="i1", output="o", expected_output="x"),
            ],
            _config(kind="numeric"),
        )  # type: ignore[arg-type]


def test_the_split_is_seeded_and_ignores_file_order() -> None:
    ids = [f"i{k}" for k in range(20)]
    test = split_test_ids(ids, 0.25, 3)
    assert len(test) == 5 and test == split_test_ids(list(reversed(ids)), 0.25, 3)
    assert test != split_test_ids(ids, 0.25, 4)
    assert len(split_test_ids(["a", "b"], 0.9, 0)) == 1  # one is always left for dev


def test_pairwise_items_are_judged_in_both_orders() -> None:
    item = Item(id="p", input="q", metadata={"output_1": "x", "output_2": "y", "label": 1})
    config = _config(kind="pairwise", label="label")
    [entry] = labelled_items([item, item.model_copy(update={"id": "p2"})], config)[:1]  # type: ignore[arg-type]
    first, swapped = pairwise_run_items([entry])
    assert first.output == ["x", "y"] and swapped.output == ["y", "x"]
    assert swapped.id == "p::swapped" and "output_1" not in swapped.metadata
    with pytest.raises(CalibrationDataError, match="needs 'output' as a list"):
        labelled_items([Item(id="z", output="single", metadata={"label": 1})] * 2, config)  # type: ignore[arg-type]


def test_a_data_file_is_identified_by_its_content(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n")
    assert file_data_key(a).split()[0] == file_data_key(b).split()[0]
    b.write_text("{} \n")
    assert file_data_key(a).split()[0] != file_data_key(b).split()[0]
