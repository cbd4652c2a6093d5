"""Scores as compact columns: one set of numpy arrays per scorer.

A run of 100,000 items with a few scorers would cost hundreds of bytes per score as Python
objects (a ``ScoreResult`` or even a tuple of boxed floats). Statistics only need four
numbers per score, so the builder appends them to ``array.array`` buffers (21 bytes per
score) and hands out numpy arrays on demand. Everything in ``assay.analysis`` works from
these columns, which is also what keeps it independent of the store and the runner: any
source of ``(scorer, position, repeat, status, score)`` can feed it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.types import ScoreRow, ScoreStatus

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
        buf = self._buffers.get(scorer_id)
        if buf is None:
            buf = self._buffers[scorer_id] = _Buffers()
        buf.position.append(position)
        buf.repeat.append(repeat)
        buf.value.append(value)
        buf.status.append(code)

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
        return ScoreColumns(
            position=np.frombuffer(buf.position, dtype=np.int64).copy(),
            repeat=np.frombuffer(buf.repeat, dtype=np.intc).astype(np.int32),
            value=np.frombuffer(buf.value, dtype=np.float64).copy(),
            status=np.frombuffer(buf.status, dtype=np.int8).copy(),
        )

    @classmethod
    def from_rows(cls, rows: Iterable[ScoreRow]) -> ScoreColumnsBuilder:
        """Build from the store's flattest form, streaming (rows are not kept)."""
        builder = cls()
        for row in rows:
            builder.add(row.scorer_id, row.position, row.repeat, row.status, row.score)
        return builder
