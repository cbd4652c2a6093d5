"""Readers and writers must stream: memory stays flat however large the file is."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from assay.datasets import read_items, write_items
from assay.types import Item

ROWS = 200_000
PEAK_LIMIT = 4 * 1024 * 1024  # the file itself is ~25 MB; the Items alone would be far more


def _generate_jsonl(path: Path, rows: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            row = {
                "id": f"item-{i}",
                "input": f"question number {i} " + "x" * 40,
                "expected_output": f"answer {i}",
                "metadata": {"n": i},
            }
            fh.write(json.dumps(row) + "\n")


def _peak_while(consume: Iterator[Item]) -> tuple[int, int]:
    tracemalloc.start()
    try:
        count = sum(1 for _ in consume)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, peak


def _synthetic(rows: int) -> Iterator[Item]:
    for i in range(rows):
        yield Item(id=f"item-{i}", input=f"question {i} " + "x" * 40, metadata={"n": i})


def test_jsonl_reader_streams(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    _generate_jsonl(path, ROWS)
    assert path.stat().st_size > 20 * 1024 * 1024
    count, peak = _peak_while(read_items(path))
    assert count == ROWS
    assert peak < PEAK_LIMIT, f"peak {peak / 1e6:.1f} MB"


@pytest.mark.parametrize("name", ["big.csv", "big.parquet", "big_hf"])
def test_other_formats_stream_both_ways(tmp_path: Path, name: str) -> None:
    rows = 50_000
    path = tmp_path / name
    write_items(_synthetic(10), tmp_path / ("warm-" + name))  # import pyarrow untraced
    tracemalloc.start()
    try:
        assert write_items(_synthetic(rows), path) == rows
        _, write_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    arrow_peak = 0

    def watched() -> Iterator[Item]:
        # pyarrow allocates outside Python's allocator, so sample its pool as well
        nonlocal arrow_peak
        for i, item in enumerate(read_items(path)):
            if i % 500 == 0:
                arrow_peak = max(arrow_peak, pa.total_allocated_bytes())
            yield item

    count, read_peak = _peak_while(watched())
    assert count == rows
    assert arrow_peak < 2 * PEAK_LIMIT, f"arrow peak {arrow_peak / 1e6:.1f} MB"
    assert write_peak < 3 * PEAK_LIMIT, f"write peak {write_peak / 1e6:.1f} MB"
    assert read_peak < PEAK_LIMIT, f"read peak {read_peak / 1e6:.1f} MB"
