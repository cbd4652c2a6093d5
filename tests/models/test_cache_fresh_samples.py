"""``fresh_samples``: inside it every call reaches the model (repeats are independent
samples); outside it the cache answers as before. Through the real HTTP client and server."""

from __future__ import annotations

import asyncio

from assay.models.base import ChatMessage, ModelSettings
from assay.models.cache import CachedModel, MemoryModelCache, fresh_samples
from assay.models.openai_compat import OpenAICompatibleModel
from assay.testing.openai_server import MockOpenAIServer

MESSAGES = [ChatMessage(role="user", content="Is the sky blue?")]
ZERO = ModelSettings(temperature=0.0)


async def test_fresh_samples_bypass_the_cache_in_tasks_too(server: MockOpenAIServer) -> None:
    store = MemoryModelCache()
    inner = OpenAICompatibleModel("mock", base_url=server.base_url, provider="mock")
    model = CachedModel(inner, cache=store)
    await model.generate(MESSAGES, settings=ZERO)
    assert len(server.chat_requests) == 1 and len(store) == 1
    with fresh_samples():
        answers = await asyncio.gather(*(model.generate(MESSAGES, settings=ZERO) for _ in range(3)))
    assert len(server.chat_requests) == 4  # three new samples, none from the cache
    assert not any(a.cached for a in answers) and model.stats.bypassed == 3
    hit = await model.generate(MESSAGES, settings=ZERO)  # the block is over: cached again
    assert hit.cached is True and len(server.chat_requests) == 4
