"""JSON encoding, ids and clocks shared by the store's modules.

Why a custom JSON encoder: item inputs and outputs are whatever a target returned, so they
may hold values ``json`` cannot encode (a pydantic model, a ``datetime``, a ``set``) or
non-finite floats, which SQLite would store but PostgreSQL's JSONB rejects. Encoding them the
same way on both backends keeps a result readable wherever it was written.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from itertools import islice
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


def new_id() -> str:
    """A 32-hex-digit id that sorts by creation time.

    Ids are made by the client so a batch of results and their scores can be inserted with
    ``executemany`` (no round trip to learn generated keys); the time prefix keeps inserts
    appending to the end of the primary-key B-tree instead of scattering across it.
    """
    return f"{time.time_ns():016x}{secrets.token_hex(8)}"


def now() -> float:
    """Unix time in seconds: the store's timestamp format (as in ``RunInfo.created_at``)."""
    return time.time()


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by ``None`` (JSON has no such numbers)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_finite(v) for v in value]
    if isinstance(value, BaseModel):
        return _finite(value.model_dump(mode="json"))
    return value


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
)
"""Built once: ``json.dumps`` with options constructs a new encoder on every call."""


def dumps(value: Any) -> str:
    """Compact JSON; non-finite floats become ``null`` (checked only when the fast path fails)."""
    try:
        return _ENCODER.encode(value)
    except ValueError:
        return _ENCODER.encode(_finite(value))


def loads(text: str | bytes) -> Any:
    return json.loads(text)


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of up to ``size`` values, pulled lazily: a million-row import never sits in memory."""
    iterator = iter(values)
    while chunk := list(islice(iterator, size)):
        yield chunk
