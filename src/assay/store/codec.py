"""JSON encoding, ids and clocks shared by the store's modules.

Why a custom JSON encoder: item inputs and outputs are whatever a target returned, so they
may hold values ``json`` cannot encode (a pydantic model, a ``datetime``, a ``set``) or
non-finite floats, which SQLite would store but PostgreSQL's json rejects. Encoding them the
same way on both backends keeps a result readable wherever it was written.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from itertools import islice
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

T = TypeVar("T")


def new_id() -> str:
    """A 32-hex-digit id that sorts by creation time.

    Ids are made by the client so a batch of results and their scores can be inserted with
    ``executemany`` (no round trip to learn generated keys); the time prefix keeps inserts
    appending to the end of the primary-key B-tree instead of scattering across it.
    """
    return f"{time.time_ns():016x}{secrets.token_hex(8)}"


class IdSource:
    """``new_id``s for a batch, with one system call for all their random halves.

    The writer thread makes two ids per stored result; ``secrets.token_hex`` per id (an
    ``os.urandom`` call each) was about 6 % of its time. Same shape and the same 64 random
    bits per id, drawn in one ``os.urandom`` per ``size`` ids; the time prefix is read once
    per draw, so ids of one batch share it and still sort after every earlier batch's.
    """

    __slots__ = ("_hex", "_next", "_prefix", "_size")

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._hex = ""
        self._next = 0
        self._prefix = ""

    def __call__(self) -> str:
        start = self._next
        if start >= len(self._hex):
            self._hex = secrets.token_hex(8 * self._size)
            self._prefix = f"{time.time_ns():016x}"
            start = 0
        self._next = start + 16
        return self._prefix + self._hex[start : start + 16]


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
_encode_string = json.encoder.encode_basestring
"""What ``_ENCODER`` (``ensure_ascii=False``) does with a ``str``."""
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode_chunks = (
    None
    if _make_c_encoder is None
    else _make_c_encoder(None, _default, _encode_string, None, ":", ",", False, False, False)
)
"""``_ENCODER``'s own C encoder, built once: ``JSONEncoder.encode`` builds a new one for
every non-string value (half of a small dict's time, e.g. a score's ``steps``, encoded once
per stored result). Same options, so the same text; no circular-reference markers (shared
state between threads): a circular value ends in ``RecursionError`` as it did before, where
the markers' ``ValueError`` sent it to ``_finite``, which recursed without end."""


NUL_ESCAPE = "\uf8ff"
"""A private-use character that escapes NUL in stored text: PostgreSQL rejects NUL (``\\u0000``)
in text and JSONB, so a target output holding one would fail its whole batch. ``NUL_ESCAPE``
followed by ``0`` stands for NUL and followed by ``e`` for the escape character itself, so
the round trip is exact on every backend (see ``escape_nul``/``unescape_nul``)."""
_JSON_NUL = "\\u0000"


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate (``"a\\ud800"``, from a target's broken decoding): Python strings hold one
but UTF-8 cannot encode it, so SQLite and PostgreSQL reject the whole batch. It is stored as
``NUL_ESCAPE`` + ``u`` + four hex digits and restored exactly on read."""


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"{NUL_ESCAPE}u{ord(match.group()):04x}"


def escape_nul(text: str) -> str:
    """``text`` without NUL characters or lone surrogates, reversibly (a no-op for ordinary
    text)."""
    surrogate = _SURROGATE.search(text) is not None
    if "\x00" not in text and NUL_ESCAPE not in text and not surrogate:
        return text
    text = text.replace(NUL_ESCAPE, NUL_ESCAPE + "e").replace("\x00", NUL_ESCAPE + "0")
    return _SURROGATE.sub(_escape_surrogate, text) if surrogate else text


def unescape_nul(text: str) -> str:
    """The inverse of ``escape_nul``."""
    if NUL_ESCAPE not in text:
        return text
    out: list[str] = []
    i = 0
    while (j := text.find(NUL_ESCAPE, i)) != -1:
        out.append(text[i:j])
        code = text[j + 1 : j + 2]
        hex4 = text[j + 2 : j + 6]
        if code == "u" and len(hex4) == 4 and _is_hex(hex4) and 0xD800 <= int(hex4, 16) <= 0xDFFF:
            out.append(chr(int(hex4, 16)))
            i = j + 6
            continue
        out.append("\x00" if code == "0" else NUL_ESCAPE if code == "e" else NUL_ESCAPE + code)
        i = j + 2
    out.append(text[i:])
    return "".join(out)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_lone_surrogates(text: str) -> str:
    """``text`` (JSON or CSV about to be written) with each lone surrogate written as its
    JSON escape ``\\udXXX``, as ``json.dumps`` writes it. Why: UTF-8 cannot encode a lone
    surrogate, so a file or response holding one failed half-written. In a JSON text a raw
    surrogate can only stand inside a string, where its escape is the same character
    (``json.loads`` gives it back); in a CSV text cell it is the same spelling, as text.
    A no-op (one ``isascii``) for ASCII text."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_json_escape, text)


_ESCAPED = re.compile(f"{NUL_ESCAPE}(?:u([0-9a-f]{{4}})|0|e)")


def _as_json_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code is not None:
        return f"\\u{code}"
    return "\\u0000" if match.group()[1] == "0" else NUL_ESCAPE


def to_json_text(value: Any) -> str:
    """pydantic-core's JSON of ``value`` (``to_json``: what ``model_dump_json`` writes);
    a lone surrogate in a string or key, which ``to_json`` refuses (it writes UTF-8), is
    written as its escape ``\\udXXX`` instead (``escape_lone_surrogates``). Only a value
    that fails pays for the second pass: its strings escaped reversibly
    (``escape_nul``), serialised, and the escapes turned into JSON escapes."""
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        text = to_json(_map_strings(value, escape_nul)).decode()
    return _ESCAPED.sub(_as_json_escape, text)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, Mapping):
        return {fn(str(k)): _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def dumps(value: Any) -> str:
    """Compact JSON; non-finite floats become ``null`` (checked only when the fast path fails);
    NUL characters and lone surrogates in strings are escaped (``escape_nul``), which costs
    nothing when none."""
    if type(value) is str and value.isascii() and "\x00" not in value:
        # the usual cell (a plain output, input or expected text): what the encoder gives a
        # string, without its checks; nothing to escape (NUL_ESCAPE and surrogates are not
        # ASCII)
        return _encode_string(value)
    try:
        if _encode_chunks is None:
            text = _ENCODER.encode(value)
        else:
            text = "".join(_encode_chunks(value, 0))
    except ValueError:
        text = _ENCODER.encode(_finite(value))
    if _JSON_NUL in text or (
        not text.isascii() and (NUL_ESCAPE in text or _SURROGATE.search(text) is not None)
    ):
        plain = loads_plain(text)
        text = _ENCODER.encode(_map_strings(plain, escape_nul))
    return text


def loads_plain(text: str | bytes) -> Any:
    return json.loads(text)


def loads(text: str | bytes) -> Any:
    """Parse stored JSON, restoring escaped NUL characters."""
    value = json.loads(text)
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if NUL_ESCAPE in text:
        return _map_strings(value, unescape_nul)
    return value


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of up to ``size`` values, pulled lazily: a million-row import never sits in memory."""
    iterator = iter(values)
    while chunk := list(islice(iterator, size)):
        yield chunk
