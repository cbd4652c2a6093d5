"""Scores as compact columns: one set of numpy arrays per scorer.

A run of 100,000 items with a few scorers would cost hundreds of bytes per score as Python
objects (a ``ScoreResult`` or even a tuple of boxed floats). Statistics only need four
numbers per score, so the builder appends them to ``array.array`` buffers (21 bytes per
score) and hands out numpy arrays on demand. Everything in ``assay.analysis`` works from
these columns, which is also what keeps it independent of the store and the runner: any
source of ``(scorer, position, repeat, status, score)`` can feed it.

A scorer's named values (``ScoreResult.values``: rouge1/rouge2/...) get the same compact
columns, one per (scorer, value key), holding only the ready results that reported the key.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from assay.types import ScoreRow, ScoreStatus

if TYPE_CHECKING:  # numpy is imported when columns are made, not while a run fills buffers
    import numpy as np
    import numpy.typing as npt

READY: Final = 0
NOT_SCORABLE: Final = 1
ERROR: Final = 2

STATUS_CODES: Final[dict[str, int]] = {"ready": READY, "not_scorable": NOT_SCORABLE, "error": ERROR}
"""``ScoreStatus`` -> the int8 code stored in ``ScoreColumns.status``."""


@dataclass(frozen=True, eq=False)
class ScoreColumns:
    """All results of one scorer, one entry per (item position, repeat).

    ``value`` is NaN unless ``status`` is ready (0), so a failure can never be averaged in:
    NaN poisons a plain mean instead of silently lowering it. ``eq=False`` because numpy
    arrays do not compare to a single bool.
    """

    position: npt.NDArray[np.int64]
    repeat: npt.NDArray[np.int32]
    value: npt.NDArray[np.float64]
    status: npt.NDArray[np.int8]

    def __len__(self) -> int:
        return int(self.position.shape[0])

    @property
    def ready(self) -> npt.NDArray[np.bool_]:
        """Mask of the results that carry a number."""
        mask: npt.NDArray[np.bool_] = self.status == READY
        return mask

    @classmethod
    def empty(cls) -> ScoreColumns:
        """Columns of a scorer that produced nothing (so callers need no special case)."""
        import numpy as np

        return cls(
            position=np.empty(0, dtype=np.int64),
            repeat=np.empty(0, dtype=np.int32),
            value=np.empty(0, dtype=np.float64),
            status=np.empty(0, dtype=np.int8),
        )


class _Buffers:
    """The four append-only buffers of one scorer."""

    __slots__ = ("position", "repeat", "status", "value")

    def __init__(self) -> None:
        self.position = array("q")
        self.repeat = array("i")  # C int: 4 bytes on every platform numpy supports
        self.value = array("d")
        self.status = array("b")


class ScoreColumnsBuilder:
    """Collects scores one at a time and turns them into ``ScoreColumns`` per scorer.

    Scorer ids keep their first-seen order so reports list scorers the way the run did.
    """

    def __init__(self) -> None:
        self._buffers: dict[str, _Buffers] = {}
        self._values: dict[str, dict[str, _Buffers]] = {}
        """scorer id -> value key -> buffers: one column per (scorer, value key)."""

    def add(
        self,
        scorer_id: str,
        position: int,
        repeat: int,
        status: ScoreStatus | int,
        score: float | None,
    ) -> None:
        """Append one score. A non-ready status stores NaN whatever ``score`` says; a ready
        status without a finite number is treated as an error rather than trusted."""
        code = STATUS_CODES[status] if isinstance(status, str) else int(status)
        if code not in (READY, NOT_SCORABLE, ERROR):
            raise ValueError(f"unknown score status code {status!r}")
        value = math.nan
        if code == READY:
            if score is None or not math.isfinite(score):
                code = ERROR
            else:
                value = float(score)
        self._append(scorer_id, position, repeat, value, code)

    def add_ready(self, scorer_id: str, position: int, repeat: int, value: float) -> None:
        """``add`` of a ready result whose score the caller checked is a finite ``float``
        (the runner's common case, without ``add``'s status decoding)."""
        self._append(scorer_id, position, repeat, value, READY)

    def _append(self, scorer_id: str, position: int, repeat: int, value: float, code: int) -> None:
        buf = self._buffers.get(scorer_id)
        if buf is None:
            buf = self._buffers[scorer_id] = _Buffers()
        buf.position.append(position)
        buf.repeat.append(repeat)
        buf.value.append(value)
        buf.status.append(code)

    def add_values(
        self, scorer_id: str, position: int, repeat: int, values: Mapping[str, float]
    ) -> None:
        """Append a ready result's named values, each to its own (scorer, key) column. Only
        numbers are recorded (a result without a key simply has no entry in its column), so
        value columns are all ``ready``; non-finite numbers are skipped."""
        if not values:
            return
        columns = self._values.get(scorer_id)
        if columns is None:
            columns = self._values[scorer_id] = {}
        for key, number in values.items():
            if number is None or not math.isfinite(number):
                continue
            buf = columns.get(key)
            if buf is None:
                buf = columns[key] = _Buffers()
            buf.position.append(position)
            buf.repeat.append(repeat)
            buf.value.append(float(number))
            buf.status.append(READY)

    def value_keys(self, scorer_id: str) -> list[str]:
        """The value keys ``scorer_id`` reported, in first-seen order."""
        return list(self._values.get(scorer_id, {}))

    def value_columns(self, scorer_id: str, key: str) -> ScoreColumns:
        """One (scorer, value key) column (empty when never reported)."""
        buf = self._values.get(scorer_id, {}).get(key)
        return ScoreColumns.empty() if buf is None else _to_columns(buf)

    def scorer_ids(self) -> list[str]:
        """Scorers seen so far, in first-seen order."""
        return list(self._buffers)

    def __contains__(self, scorer_id: object) -> bool:
        return scorer_id in self._buffers

    def __iter__(self) -> Iterator[str]:
        return iter(self._buffers)

    def __len__(self) -> int:
        """Total number of scores across scorers."""
        return sum(len(b.position) for b in self._buffers.values())

    def columns(self, scorer_id: str) -> ScoreColumns:
        """A numpy copy of one scorer's scores (empty when the scorer never reported).

        Copies, not views: a numpy view would pin the ``array`` buffer and make the next
        ``add`` fail with ``BufferError``.
        """
        buf = self._buffers.get(scorer_id)
        if buf is None:
            return ScoreColumns.empty()
        return _to_columns(buf)

    @classmethod
    def from_rows(cls, rows: Iterable[ScoreRow]) -> ScoreColumnsBuilder:
        """Build from the store's flattest form, streaming (rows are not kept)."""
        builder = cls()
        for row in rows:
            builder.add(row.scorer_id, row.position, row.repeat, row.status, row.score)
            if row.values:
                builder.add_values(row.scorer_id, row.position, row.repeat, row.values)
        return builder


def _to_columns(buf: _Buffers) -> ScoreColumns:
    import numpy as np

    return ScoreColumns(
        position=np.frombuffer(buf.position, dtype=np.int64).copy(),
        repeat=np.frombuffer(buf.repeat, dtype=np.intc).astype(np.int32),
        value=np.frombuffer(buf.value, dtype=np.float64).copy(),
        status=np.frombuffer(buf.status, dtype=np.int8).copy(),
    )
