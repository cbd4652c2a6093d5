from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from assay.summary.columns import ERROR, NOT_SCORABLE, READY, ScoreColumnsBuilder
from assay.types import ScoreRow


def test_columns_hold_numbers_only_for_ready_scores() -> None:
    b = ScoreColumnsBuilder()
    b.add("acc", 3, 0, "ready", 0.25)
    b.add("acc", 1, 1, "error", None)
    b.add("acc", 2, 0, "not_scorable", None)
    cols = b.columns("acc")
    assert cols.position.dtype == np.int64 and cols.position.tolist() == [3, 1, 2]
    assert cols.repeat.dtype == np.int32 and cols.repeat.tolist() == [0, 1, 0]
    assert cols.status.dtype == np.int8
    assert cols.status.tolist() == [READY, ERROR, NOT_SCORABLE]
    assert cols.value[0] == 0.25 and math.isnan(cols.value[1]) and math.isnan(cols.value[2])
    assert cols.ready.tolist() == [True, False, False]
    assert len(cols) == 3


def test_a_ready_status_without_a_finite_number_counts_as_an_error() -> None:
    b = ScoreColumnsBuilder()
    b.add("acc", 0, 0, "ready", math.nan)
    b.add("acc", 1, 0, "ready", None)
    b.add("acc", 2, 0, READY, 1.0)
    assert b.columns("acc").status.tolist() == [ERROR, ERROR, READY]


def test_scorer_order_unknown_scorer_and_adding_after_reading() -> None:
    b = ScoreColumnsBuilder()
    b.add("z", 0, 0, "ready", 1.0)
    b.add("a", 0, 0, "ready", 0.0)
    assert b.scorer_ids() == ["z", "a"]
    assert len(b.columns("missing")) == 0
    first = b.columns("z")
    b.add("z", 1, 0, "ready", 0.5)  # a numpy view would make this raise BufferError
    assert len(first) == 1 and b.columns("z").value.tolist() == [1.0, 0.5]
    assert len(b) == 3
    with pytest.raises(ValueError):
        b.add("z", 0, 0, 7, 1.0)


def test_from_rows_groups_by_scorer() -> None:
    rows = [
        ScoreRow("i1", 0, 0, "acc", "ready", 1.0),
        ScoreRow("i1", 0, 0, "len", "ready", 12.0),
        ScoreRow("i2", 1, 0, "acc", "not_scorable", None),
    ]
    b = ScoreColumnsBuilder.from_rows(iter(rows))
    assert b.scorer_ids() == ["acc", "len"]
    assert b.columns("acc").position.tolist() == [0, 1]
    assert b.columns("len").value.tolist() == [12.0]


def test_memory_per_score_is_tens_of_bytes() -> None:
    n = 100_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        b = ScoreColumnsBuilder()
        for i in range(n):
            b.add("acc", i, 0, "ready", i / n)
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(b) == n
    assert used / n < 40, f"{used / n:.1f} bytes per score"


def test_add_ready_stores_what_add_of_a_ready_float_stores() -> None:
    import numpy as np

    from assay.summary.columns import ScoreColumnsBuilder

    fast, slow = ScoreColumnsBuilder(), ScoreColumnsBuilder()
    for position, value in enumerate([0.0, 1.0, -0.0, 0.25]):
        fast.add_ready("s", position, position % 2, value)
        slow.add("s", position, position % 2, "ready", value)
    a, b = fast.columns("s"), slow.columns("s")
    for name in ("position", "repeat", "value", "status"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert fast.scorer_ids() == ["s"]
