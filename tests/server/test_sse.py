"""``server.sse``: the event format and the replaying channel."""

from __future__ import annotations

import asyncio

from assay.server.sse import EventChannel, format_event, stream


def test_format_is_one_event_one_json_line() -> None:
    assert format_event("done", {"a": [1, 2]}) == 'event: done\ndata: {"a":[1,2]}\n\n'


async def test_late_subscribers_see_every_event_and_the_end() -> None:
    channel = EventChannel()
    channel.publish("result", 1)

    async def collect() -> list[tuple[str, object]]:
        return [event async for event in channel.subscribe()]

    early = asyncio.create_task(collect())
    await asyncio.sleep(0)
    channel.publish("result", 2)
    channel.publish("done", None)
    channel.close()
    channel.publish("result", 3)  # after close: dropped
    late = await collect()
    expected = [("result", 1), ("result", 2), ("done", None)]
    assert await asyncio.wait_for(early, 1) == expected
    assert late == expected


async def test_stream_renders_events_as_text() -> None:
    channel = EventChannel()
    channel.publish("progress", {"done": 1})
    channel.close()
    text = "".join([chunk async for chunk in stream(channel.subscribe())])
    assert text == 'event: progress\ndata: {"done":1}\n\n'
