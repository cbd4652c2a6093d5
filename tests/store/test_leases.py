"""Run leases: one process executes a run at a time; a run nobody holds is interrupted."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assay.store import RunLeasedError, Store
from assay.store.runs_repo import new_lease_owner

from .test_runs import run_info


def test_a_live_lease_refuses_a_second_owner_and_release_frees_it(store: Store) -> None:
    store.runs.create(run_info("r"))
    first, second = new_lease_owner(), new_lease_owner()
    store.runs.acquire_lease("r", first)
    store.runs.mark_started("r")
    assert store.runs.get("r").status == "running"
    with pytest.raises(RunLeasedError, match=r"run r is being executed elsewhere \(process"):
        store.runs.acquire_lease("r", second)
    assert store.runs.renew_lease("r", first) and not store.runs.renew_lease("r", second)
    store.runs.acquire_lease("r", first)  # the owner may take it again
    store.runs.release_lease("r", first)
    store.runs.acquire_lease("r", second)


def test_an_expired_lease_shows_interrupted_and_is_taken_over(store: Store) -> None:
    store.runs.create(run_info("r"))
    store.runs.acquire_lease("r", new_lease_owner(), lease_s=-1.0)  # already lapsed
    store.runs.mark_started("r")
    assert store.runs.get("r").status == "interrupted"
    assert [r.status for r in store.runs.list()] == ["interrupted"]
    store.runs.acquire_lease("r", new_lease_owner())
    assert store.runs.get("r").status == "running"


def test_the_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(store: Store) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    host_owner = new_lease_owner().split(":")[0]
    ghost = f"{host_owner}:{dead.stdout.strip()}:feedbeef"
    store.runs.create(run_info("r"))
    store.runs.acquire_lease("r", ghost)
    store.runs.mark_started("r")
    assert store.runs.get("r").status == "interrupted"  # its process is gone
    store.runs.acquire_lease("r", new_lease_owner())


def test_finishing_releases_the_lease(store: Store) -> None:
    store.runs.create(run_info("r"))
    store.runs.acquire_lease("r", new_lease_owner())
    store.runs.finish("r", "completed", None)
    store.runs.acquire_lease("r", new_lease_owner())
