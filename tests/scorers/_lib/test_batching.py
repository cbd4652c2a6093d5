from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from assay.scorers._lib.batching import MicroBatcher


def test_concurrent_submits_share_one_call_and_keep_their_results() -> None:
    calls: list[list[int]] = []

    def square(items: Sequence[int]) -> list[int]:
        calls.append(list(items))
        return [i * i for i in items]

    batcher: MicroBatcher[int, int] = MicroBatcher(square)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(10)))

    assert asyncio.run(main()) == [i * i for i in range(10)]
    assert calls == [list(range(10))]


def test_max_batch_splits_large_queues() -> None:
    sizes: list[int] = []

    def ident(items: Sequence[int]) -> list[int]:
        sizes.append(len(items))
        return list(items)

    batcher: MicroBatcher[int, int] = MicroBatcher(ident, max_batch=4)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(10)))

    assert asyncio.run(main()) == list(range(10))
    assert sizes == [4, 4, 2]


def test_sequential_submits_are_batches_of_one() -> None:
    sizes: list[int] = []

    def ident(items: Sequence[str]) -> list[str]:
        sizes.append(len(items))
        return list(items)

    batcher: MicroBatcher[str, str] = MicroBatcher(ident)

    async def main() -> None:
        assert await batcher.submit("a") == "a"
        assert await batcher.submit("b") == "b"

    asyncio.run(main())
    assert sizes == [1, 1]


def test_a_failing_batch_fails_every_waiter_and_the_next_batch_works() -> None:
    def fail_on_negative(items: Sequence[int]) -> list[int]:
        if any(i < 0 for i in items):
            raise ValueError("negative")
        return list(items)

    batcher: MicroBatcher[int, int] = MicroBatcher(fail_on_negative)

    async def main() -> None:
        results = await asyncio.gather(
            batcher.submit(1), batcher.submit(-1), return_exceptions=True
        )
        assert all(isinstance(r, ValueError) for r in results)
        assert await batcher.submit(2) == 2

    asyncio.run(main())


def test_state_is_per_event_loop() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(lambda items: [i + 1 for i in items])

    async def main() -> int:
        return await batcher.submit(1)

    assert asyncio.run(main()) == 2
    assert asyncio.run(main()) == 2  # a second loop gets its own queue


def test_completeness_concurrent_and_sequential_agree() -> None:
    from assay import create_scorer

    scorer = create_scorer("completeness")
    pairs = [
        ("The quick brown fox jumps over the lazy dog", "The fox jumps over the dog"),
        ("apples, oranges, and bananas", "apples and bananas"),
        ("The weather is sunny today", "I like to eat pizza"),
    ]

    async def sequential() -> list[float | None]:
        return [(await scorer.run(input=a, output=b)).score for a, b in pairs]

    async def concurrent() -> list[float | None]:
        results = await asyncio.gather(*(scorer.run(input=a, output=b) for a, b in pairs))
        return [r.score for r in results]

    assert asyncio.run(sequential()) == asyncio.run(concurrent())
    assert asyncio.run(sequential())[0] == pytest.approx(0.625)
