"""``assay run``, ``assay runs ...`` and ``assay datasets ...`` as users run them: real
subprocesses on a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def assay(db: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {
        "COLUMNS": "200",
        "PATH": "/usr/bin:/bin",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", "--db", f"sqlite:///{db}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    rows = [
        {"question": f"q{i}", "answer": f"Q{i}" if i % 2 else "nope", "topic": "t"}
        for i in range(6)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_datasets_import_show_versions_export(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "a.db"
    out = assay(
        db,
        "datasets",
        "import",
        str(data),
        "--name",
        "qa",
        "--map",
        "input=question",
        "--map",
        "expected_output=answer",
    )
    assert out.returncode == 0, out.stderr
    assert "imported 6 items into qa v1" in out.stdout
    add = assay(
        db, "datasets", "add", "qa", "--input", "q9", "--expected-output", "Q9", "--id", "x9"
    )
    assert add.returncode == 0, add.stderr
    assert "v2" in add.stdout
    listing = assay(db, "datasets", "list")
    assert "qa" in listing.stdout and "7" in listing.stdout
    versions = assay(db, "datasets", "versions", "qa")
    assert versions.returncode == 0 and "3 versions" in versions.stdout
    show = assay(db, "datasets", "show", "qa", "--version", "1")
    assert "6 items" in show.stdout and "x9" not in show.stdout
    exported = tmp_path / "out.csv"
    exp = assay(db, "datasets", "export", "qa", str(exported))
    assert exp.returncode == 0, exp.stderr
    assert exported.read_text().count("\n") == 8  # header + 7 rows


def test_bad_import_reports_the_line_and_leaves_the_database_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    good = assay(db, "datasets", "import", str(_jsonl(tmp_path / "ok.jsonl", 3)), "--name", "qa")
    assert good.returncode == 0, good.stderr
    bad = tmp_path / "bad.jsonl"
    lines = [json.dumps({"id": f"n{i}", "input": f"x{i}"}) for i in range(10)]
    lines[6] = json.dumps({"id": "n6", "input": None})
    bad.write_text("\n".join(lines) + "\n")
    out = assay(db, "datasets", "import", str(bad), "--name", "qa")
    assert out.returncode == 2
    assert "line 7" in out.stderr and "input" in out.stderr
    versions = assay(db, "datasets", "versions", "qa")
    assert "2 versions" in versions.stdout  # v0 (create) and v1 (good import) only
    show = assay(db, "datasets", "show", "qa")
    assert "3 items" in show.stdout


def _jsonl(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"g{i}", "input": f"g{i}"}) + "\n" for i in range(n)))
    return path


def test_import_of_existing_ids_needs_upsert_or_skip_existing(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    first = assay(db, "datasets", "import", str(_jsonl(tmp_path / "v1.jsonl", 3)), "--name", "qa")
    assert first.returncode == 0, first.stderr
    again = tmp_path / "again.jsonl"
    rows = [{"id": f"g{i}", "input": f"g{i}"} for i in range(4)]  # g0-g2 as before, g3 new
    rows[1]["input"] = "g1, corrected"
    again.write_text("".join(json.dumps(r) + "\n" for r in rows))

    refused = assay(db, "datasets", "import", str(again), "--name", "qa")
    assert refused.returncode == 2
    message = refused.stderr.strip()
    assert "'g0', 'g1', 'g2'" in message and "already items" in message
    assert "--upsert" in message and "--skip-existing" in message
    assert "update_item" not in message and "Traceback" not in message
    both = assay(
        db, "datasets", "import", str(again), "--name", "qa", "--upsert", "--skip-existing"
    )
    assert both.returncode == 2 and "exclude each other" in both.stderr

    skip = assay(db, "datasets", "import", str(again), "--name", "qa", "--skip-existing")
    assert skip.returncode == 0, skip.stderr
    assert "imported 4 items into qa v2: 1 added, 0 updated, 3 left as they were" in skip.stdout
    upsert = assay(db, "datasets", "import", str(again), "--name", "qa", "--upsert")
    assert upsert.returncode == 0, upsert.stderr
    assert "into qa v3: 0 added, 1 updated, 3 left as they were" in upsert.stdout
    repeat = assay(db, "datasets", "import", str(again), "--name", "qa", "--upsert")
    assert "into qa v3: 0 added, 0 updated, 4 left as they were (no new version)" in repeat.stdout

    versions = json.loads(assay(db, "datasets", "versions", "qa", "--json").stdout)
    assert [(v["version"], v["added"], v["updated"], v["item_count"]) for v in versions] == [
        (0, 0, 0, 0),
        (1, 3, 0, 3),
        (2, 1, 0, 4),
        (3, 0, 1, 4),
    ]


def test_run_from_config_then_list_show_export_compare(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "c.db"
    config = tmp_path / "run.yaml"
    config.write_text(
        "name: upper\n"
        f"data: {data.name}\n"
        "target: tests.runner.slow_targets:slow_upper\n"
        "scorers:\n  - exact-match\n  - type: exact-match\n    params: {ignore_case: true}\n"
        "concurrency: 3\nthreshold: 0.5\n"
    )
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    data.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "input": r["question"], "expected_output": r["answer"]})
            + "\n"
            for i, r in enumerate(rows)
        )
    )
    first = assay(db, "run", str(config), "--no-progress")
    assert first.returncode == 0, first.stderr
    assert "exact-match" in first.stdout and "stored" in first.stdout
    second = assay(
        db,
        "run",
        str(config),
        "--scorer",
        "exact-match",
        "--no-progress",
        "--target",
        "tests.targets.fixture_targets:upper",
        "--report",
        str(tmp_path / "r.html"),
        "--json",
        str(tmp_path / "r.json"),
    )
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "r.html").exists()
    exported = json.loads((tmp_path / "r.json").read_text())
    assert len(exported["results"]) == 6

    listing = assay(db, "runs", "list", "--json")
    ids = [r["info"]["id"] for r in json.loads(listing.stdout) if r["info"]["name"] == "upper"]
    assert len(ids) == 2, listing.stdout
    piped = assay(db, "runs", "list").stdout  # no terminal: one block per run, full ids
    assert all(f"id: {run_id}" in piped for run_id in ids), piped
    show = assay(db, "runs", "show", ids[-1], "--items", "2")
    assert show.returncode == 0 and "exact-match" in show.stdout
    shown = json.loads(assay(db, "runs", "show", ids[-1], "--items", "2", "--json").stdout)
    assert shown["run"]["info"]["id"] == ids[-1] and len(shown["results"]) == 2
    cmp = assay(db, "runs", "compare", ids[-1], ids[0], "--report", str(tmp_path / "cmp.html"))
    assert cmp.returncode == 0, cmp.stderr
    assert "exact-match" in cmp.stdout and (tmp_path / "cmp.html").exists()
    out = tmp_path / "run.json"
    exp = assay(db, "runs", "export", ids[0], "--out", str(out))
    assert exp.returncode == 0 and json.loads(out.read_text())["run"]["info"]["name"] == "upper"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--scorer", "exact-match"), "exactly one of 'data'"),
        (("run", "--data", "x.jsonl"), "no scorer given: pass --scorer TYPE"),
        (
            (
                "run",
                "--data",
                "examples/support.jsonl",
                "--scorer",
                '{"type": "tone", "parms": {}}',
            ),
            "unknown key 'parms'; did you mean 'params'?",
        ),
        (("runs", "show", "nope"), "nope"),
        (("datasets", "show", "missing"), "missing"),
        (("runs", "resume", "nope"), "nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    out = assay(tmp_path / "d.db", *args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr and "Traceback" not in out.stderr


def test_runs_list_and_show_say_how_much_of_a_partial_run_is_stored(tmp_path: Path) -> None:
    """Issue 25: an interrupted run reads "14 of 200" in ``runs list`` and ``runs show``."""
    from assay.store import open_store
    from assay.types import ItemResult, RunInfo, TargetSpec

    db = tmp_path / "p.db"
    info = RunInfo(
        id="partial0run",
        name="cut short",
        target=TargetSpec(kind="stored-output", label="stored"),
        total_items=200,
    )
    with open_store(str(db)) as store:
        store.runs.create(info)
        results = [ItemResult(item_id=f"i{k}", position=k, output="x") for k in range(14)]
        store.runs.write_results(info.id, results)
        store.runs.finish(info.id, "interrupted", None)
    listing = assay(db, "runs", "list")
    assert listing.returncode == 0, listing.stderr
    assert "14 of 200" in listing.stdout, listing.stdout
    show = assay(db, "runs", "show", info.id)
    assert show.returncode == 0, show.stderr
    assert "partial: 14 of 200 results (interrupted)" in show.stdout, show.stdout
    assert "assay runs resume partial0run" in show.stdout
