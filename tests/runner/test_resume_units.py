"""What a resume runs: every item's repeats minus the stored ones, merged in order (no set of
keys held), and a stored unit that does not match the run's items stops it."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from assay.runner.engine import ResumeMismatchError, RunPlan, _units
from assay.targets.resolve import resolve_target
from assay.types import Item, RunInfo, TargetSpec

ITEMS = [Item(id=f"i{n}", input=n) for n in range(5)]


def _plan(done: Iterable[tuple[int, int, str]] | None, repeats: int = 2) -> RunPlan:
    stored = list(done) if done is not None else None
    return RunPlan(
        info=RunInfo(id="r", target=TargetSpec(kind="callable", label="x"), repeats=repeats),
        items=lambda: ITEMS,
        target=resolve_target(lambda x: x),
        scorers=[],
        done=(lambda: iter(stored)) if stored is not None else None,
        already=len(stored or ()),
    )


def test_stored_units_are_skipped_and_the_rest_run_in_order() -> None:
    done = [(0, 0, "i0"), (0, 1, "i0"), (2, 1, "i2"), (4, 0, "i4")]
    left = [(p, item.id, r) for p, item, r in _units(_plan(done))]
    assert left == [
        (1, "i1", 0),
        (1, "i1", 1),
        (2, "i2", 0),
        (3, "i3", 0),
        (3, "i3", 1),
        (4, "i4", 1),
    ]
    assert len(list(_units(_plan(None)))) == 10


@pytest.mark.parametrize(
    ("done", "message"),
    [
        ([(1, 0, "other")], "is item 'other', but the run's items have 'i1' there"),
        ([(1, 5, "i1")], "matches none of the run's 2 repeats"),
        ([(9, 0, "i9")], "past the run's items"),
    ],
)
def test_a_stored_unit_that_matches_no_item_stops_the_run(
    done: list[tuple[int, int, str]], message: str
) -> None:
    with pytest.raises(ResumeMismatchError, match=message):
        list(_units(_plan(done)))
