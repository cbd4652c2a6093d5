"""Exit codes that let a run fail a CI job, through the real command line."""

from __future__ import annotations

from pathlib import Path

from assay.store import open_store
from assay.stored_runs import run_stored

from .test_store_commands import assay


def _stored_run(db: Path, right: bool) -> str:
    items = [{"id": f"i{k}", "input": f"q{k}", "expected_output": f"Q{k}"} for k in range(30)]

    def target(input: str) -> str:
        return input.upper() if right else "wrong"

    with open_store(f"sqlite:///{db}") as store:
        return run_stored(items, target, ["exact-match"], store=store, progress=False).id


def test_compare_fail_on_regression_exits_1_only_for_a_significant_regression(
    tmp_path: Path,
) -> None:
    db = tmp_path / "gates.db"
    good, bad = _stored_run(db, right=True), _stored_run(db, right=False)

    worse = assay(db, "runs", "compare", good, bad, "--fail-on-regression")
    assert worse.returncode == 1, worse.stderr
    assert "gate failed: exact-match: significant regression" in worse.stderr

    better = assay(db, "runs", "compare", bad, good, "--fail-on-regression")
    assert better.returncode == 0, better.stderr
    plain = assay(db, "runs", "compare", good, bad)
    assert plain.returncode == 0, plain.stderr
