"""Server-Sent Events, hand-written: an event is ``event: <name>\\ndata: <json>\\n\\n``.

A dependency (sse-starlette) would buy little for a format this small; ``StreamingResponse``
carries it, with a comment line every ``KEEPALIVE_S`` so proxies do not cut an idle stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

KEEPALIVE_S = 15.0


def format_event(event: str, data: Any) -> str:
    """One SSE message; ``data`` is JSON on a single line."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class EventChannel:
    """A replayable, append-only list of events with waiters: every subscriber sees every
    event from the first, whenever it subscribes (a preview's few results, so it stays
    small). ``close()`` ends every subscription after the events so far."""

    def __init__(self) -> None:
        self._events: list[tuple[str, Any]] = []
        self._closed = False
        self._changed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._closed

    def publish(self, event: str, data: Any) -> None:
        if self._closed:
            return
        self._events.append((event, data))
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def subscribe(self) -> AsyncIterator[tuple[str, Any]]:
        sent = 0
        while True:
            waiter = self._changed
            while sent < len(self._events):
                sent += 1
                yield self._events[sent - 1]
            if self._closed:
                return
            await waiter.wait()


async def stream(events: AsyncIterator[tuple[str, Any]]) -> AsyncIterator[str]:
    """``events`` as SSE text, with keep-alive comments while nothing happens."""
    iterator = events.__aiter__()
    pending: asyncio.Task[tuple[str, Any]] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(iterator.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_S)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                event, data = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            yield format_event(event, data)
    finally:
        if pending is not None:
            pending.cancel()


def sse_response(events: AsyncIterator[tuple[str, Any]]) -> StreamingResponse:
    return StreamingResponse(
        stream(events),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
