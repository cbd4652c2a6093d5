"""``run_sync``: results come back without being formatted on the way out."""

from __future__ import annotations

import asyncio

from assay.scoring.sync import run_sync


class Counted:
    """A result that counts how often it is ``repr``-ed (a 1,000-item ``RunResult`` takes
    about 0.45 s to format)."""

    def __init__(self) -> None:
        self.reprs = 0

    def __repr__(self) -> str:
        self.reprs += 1
        return "Counted()"


def test_the_result_is_returned_unformatted() -> None:
    value = Counted()

    async def make() -> Counted:
        await asyncio.sleep(0)
        return value

    assert run_sync(make) is value
    assert value.reprs == 0  # asyncio.run's SIGINT restore used to repr the finished task


def test_inside_a_running_loop_too() -> None:
    value = Counted()

    async def make() -> Counted:
        return value

    got: list[Counted] = []

    async def caller() -> None:  # returns None: this test's own asyncio.run must not repr it
        got.append(run_sync(make))

    asyncio.run(caller())
    assert got == [value]
    assert value.reprs == 0
