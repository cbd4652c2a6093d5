"""Run tags: stored with the run, found by tag, moved as a pointer, validated."""

from __future__ import annotations

import pytest

from assay.store import Store
from assay.types import RunInfo, TargetSpec


def _info(run_id: str, *, name: str = "suite", tags: list[str] | None = None, at: float) -> RunInfo:
    return RunInfo(
        id=run_id,
        name=name,
        target=TargetSpec(kind="callable", label="t"),
        created_at=at,
        tags=tags or [],
    )


def test_tags_round_trip_and_filter(store: Store) -> None:
    store.runs.create(_info("r1", tags=["git.branch=main", "session=1"], at=1.0))
    store.runs.create(_info("r2", tags=["git.branch=dev"], at=2.0))
    store.runs.create(_info("r3", at=3.0))
    assert store.runs.get("r1").info.tags == ["git.branch=main", "session=1"]
    assert store.runs.get("r3").info.tags == []
    assert [r.id for r in store.runs.list(tag="git.branch=main")] == ["r1"]
    assert [r.id for r in store.runs.list()] == ["r3", "r2", "r1"]
    assert {r.id: r.info.tags for r in store.runs.list()}["r2"] == ["git.branch=dev"]
    store.runs.add_tags("r3", ["git.branch=main", "git.branch=main"])
    assert store.runs.latest_with_tag("git.branch=main").id == "r3"  # type: ignore[union-attr]
    assert store.runs.latest_with_tag("nope") is None


def test_move_tag_leaves_one_holder_among_the_runs_of_a_name(store: Store) -> None:
    store.runs.create(_info("a1", name="test_a", at=1.0))
    store.runs.create(_info("a2", name="test_a", at=2.0))
    store.runs.create(_info("b1", name="test_b", tags=["baseline=main"], at=3.0))
    store.runs.move_tag("baseline=main", "a1", name="test_a")
    store.runs.move_tag("baseline=main", "a2", name="test_a")
    holders = sorted(r.id for r in store.runs.list(tag="baseline=main"))
    assert holders == ["a2", "b1"]  # test_b's baseline is another pointer
    assert store.runs.latest_with_tag("baseline=main", name="test_a").id == "a2"  # type: ignore[union-attr]


def test_deleting_a_run_deletes_its_tags(store: Store) -> None:
    store.runs.create(_info("r1", tags=["x"], at=1.0))
    store.runs.delete("r1")
    assert store.runs.list(tag="x") == []


@pytest.mark.parametrize("bad", ["", "  ", "a\nb", "x" * 256])
def test_bad_tags_are_refused_with_the_tag_named(bad: str) -> None:
    with pytest.raises(ValueError, match="tag"):
        _info("r", tags=[bad], at=1.0)


def test_one_string_is_not_a_list_of_tags(store: Store) -> None:
    with pytest.raises(ValueError, match="not one string"):
        store.runs.add_tags("r", "abc")  # type: ignore[arg-type]
