"""Exit codes that let a run fail a CI job, through the real command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.operations.stored_runs import run_stored
from assay.store import open_store

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


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    rows = [
        {"id": f"i{k}", "input": f"q{k}", "expected_output": f"Q{k}" if k % 2 else "x"}
        for k in range(10)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return assay(
        tmp_path / "r.db",
        "run",
        "--data",
        str(_data(tmp_path)),
        "--scorer",
        "exact-match",
        "--no-progress",
        *args,
    )


def test_fail_under_on_the_mean_and_on_the_ci(tmp_path: Path) -> None:
    upper = ("--target", "tests.targets.fixture_targets:upper")
    passed = _run(tmp_path, *upper, "--fail-under", "exact-match=0.4")
    assert passed.returncode == 0, passed.stderr
    failed = _run(tmp_path, *upper, "--fail-under", "exact-match=0.6")
    assert failed.returncode == 1, failed.stderr
    assert "gate failed: exact-match: mean 0.5 is below 0.6" in failed.stderr
    by_ci = _run(tmp_path, *upper, "--fail-under", "exact-match=0.4", "--gate-on", "ci")
    assert by_ci.returncode == 1 and "lower CI bound" in by_ci.stderr


def test_every_item_failing_and_max_errors_fail_the_job(tmp_path: Path) -> None:
    dead = _run(tmp_path, "--target", "tests.targets.fixture_targets:always_fails")
    assert dead.returncode == 1 and "every item failed (10 of 10 results)" in dead.stderr
    odd = ("--target", "tests.targets.fixture_targets:fails_on_odd")
    assert _run(tmp_path, *odd, "--max-errors", "50%").returncode == 0
    over = _run(tmp_path, *odd, "--max-errors", "4")
    assert over.returncode == 1 and "5 errors" in over.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fail-under", "exact-match"), "expected SCORER=VALUE"),
        (("--max-errors", "many"), "--max-errors 'many'"),
        (("--gate-on", "median"), "--gate-on 'median'"),
    ],
)
def test_bad_gates_are_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    proc = _run(tmp_path, *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_an_unknown_fail_under_scorer_stops_before_the_first_item(tmp_path: Path) -> None:
    proc = _run(
        tmp_path,
        "--target",
        "tests.targets.fixture_targets:upper",
        "--fail-under",
        "exact-mach=0.5",
    )
    assert proc.returncode == 2, proc.stderr
    assert "no scorer 'exact-mach'" in proc.stderr
    with open_store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        assert store.runs.list() == []


def test_compare_fail_on_regression_fails_when_the_candidate_was_killed(tmp_path: Path) -> None:
    db = tmp_path / "gates.db"
    good, partial = _stored_run(db, right=True), _stored_run(db, right=True)
    with open_store(f"sqlite:///{db}") as store:  # B was killed part-way: no summary
        store.runs.finish(partial, "interrupted", None)

    proc = assay(db, "runs", "compare", good, partial, "--fail-on-regression")
    assert proc.returncode == 1, proc.stderr
    assert f"gate failed: run B ({partial[:8]}) is interrupted" in proc.stderr
    assert "partial run cannot pass the gate" in proc.stderr


def test_resume_after_the_dataset_was_deleted_is_one_line_and_leaves_the_run(
    tmp_path: Path,
) -> None:
    from assay.operations.stored_runs import run_dataset

    db = tmp_path / "gone.db"
    items = [{"id": f"i{k}", "input": f"q{k}", "expected_output": f"Q{k}"} for k in range(4)]
    with open_store(f"sqlite:///{db}") as store:
        store.datasets.create("gone")
        store.datasets.add_items("gone", items)
        run_id = run_dataset(
            "gone", "tests.targets.fixture_targets:upper", ["exact-match"], store=store
        ).id
        store.runs.finish(run_id, "interrupted", None)
        store.datasets.delete("gone")
        before = store.runs.get(run_id)

    proc = assay(db, "runs", "resume", run_id[:8], "--no-progress")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "dataset 'gone'" in lines[0] and "deleted" in lines[0]
    with open_store(f"sqlite:///{db}") as store:
        assert store.runs.get(run_id) == before
