"""The reviewer commands of issue 25 as users run them: real subprocesses, a real SQLite
file, and for ``assay view`` a real server on loopback."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.cli.test_store_commands import ROOT, assay


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    rows = [
        {
            "id": f"q{i}" if i != 3 else "a/b?c",
            "input": f"q{i}",
            "output": f"A{i % 3}",
            "expected_output": "A0",
        }
        for i in range(12)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run_ids(db: Path) -> list[str]:
    out = assay(db, "runs", "list", "--json")
    return [r["info"]["id"] for r in json.loads(out.stdout)]


def test_run_subsets_are_recorded_and_bad_ids_are_one_line(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "a.db"
    limited = assay(db, "run", "--data", str(data), "-s", "exact-match", "--limit", "4")
    assert limited.returncode == 0, limited.stderr
    picked = assay(db, "run", "--data", str(data), "-s", "exact-match", "--ids", "q5,a/b?c")
    assert picked.returncode == 0, picked.stderr
    sampled = assay(
        db, "run", "--data", str(data), "-s", "exact-match", "--sample", "5", "--seed", "7"
    )
    assert sampled.returncode == 0, sampled.stderr
    runs = json.loads(assay(db, "runs", "list", "--json").stdout)
    by_meta = {json.dumps(r["info"]["metadata"]["selection"], sort_keys=True): r for r in runs}
    assert set(by_meta) == {
        '{"limit": 4}',
        '{"ids": ["q5", "a/b?c"]}',
        '{"sample": 5, "seed": 7}',
    }
    assert [r["completed_results"] for r in runs] == [5, 2, 4]  # newest first
    bad = assay(db, "run", "--data", str(data), "-s", "exact-match", "--ids", "q1,zzz")
    assert (
        bad.returncode == 2
        and bad.stderr.strip() == "error: --ids: no item with id 'zzz' in the data"
    )
    assert len(_run_ids(db)) == 3  # nothing stored


def test_output_without_a_terminal_is_one_line_per_scorer(tmp_path: Path, data: Path) -> None:
    out = assay(tmp_path / "b.db", "run", "--data", str(data), "-s", "exact-match", "--limit", "2")
    lines = out.stdout.splitlines()
    scorer_lines = [line for line in lines if line.startswith("scorer: ")]
    assert len(scorer_lines) == 1 and "mean: 0.500" in scorer_lines[0]
    assert "(1 scorer, normalized 0..1)" in out.stdout
    assert not any(line.strip() in ("error:", "errors:") for line in lines)
    listed = assay(tmp_path / "b.db", "runs", "list").stdout
    assert listed.startswith("1 run\n") and "run(s)" not in listed


def test_errors_without_a_message_name_their_kind(tmp_path: Path) -> None:
    """A target that raises ``TimeoutError()`` (no message) reads "error: TimeoutError"
    in ``runs show``, never a bare ``error:``."""
    (tmp_path / "mute_bot.py").write_text(
        "def answer(question):\n"
        "    if question == 'q1':\n"
        "        raise TimeoutError()\n"
        "    return 'A0'\n"
    )
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "input": f"q{i}", "expected_output": "A0"}) + "\n"
            for i in range(2)
        )
    )
    db = tmp_path / "e.db"
    target = ("--target", "mute_bot:answer")  # imported from the working directory
    ran = assay(db, "run", "--data", str(data), *target, "-s", "exact-match", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "target errors 1" in ran.stdout and "(1 scorer, normalized 0..1)" in ran.stdout
    (run_id,) = _run_ids(db)
    shown = assay(db, "runs", "show", run_id[:8]).stdout.splitlines()
    assert any("output: error: TimeoutError" in line for line in shown), shown
    assert not any(line.rstrip().endswith("error:") for line in shown)


def test_export_csv_jsonl_tag_and_delete(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "c.db"
    assert assay(db, "run", "--data", str(data), "-s", "exact-match").returncode == 0
    (run_id,) = _run_ids(db)
    to_stdout = assay(db, "runs", "export", run_id[:8], "--format", "csv")
    assert to_stdout.returncode == 0, to_stdout.stderr
    rows = list(csv.DictReader(io.StringIO(to_stdout.stdout)))
    assert len(rows) == 12 and {r["item_id"] for r in rows} >= {"a/b?c"}
    assert sum(float(r["exact-match.score"]) for r in rows) == 4
    out = tmp_path / "r.jsonl"
    assert assay(db, "runs", "export", run_id, "-o", str(out)).returncode == 0
    assert len([json.loads(line) for line in out.read_text().splitlines()]) == 12
    # the CLI takes the export's fast path: the same bytes as whole, validated results
    from assay.store import open_store

    with open_store(f"sqlite:///{db}") as store:
        validated = "".join(r.model_dump_json() + "\n" for r in store.runs.results(run_id))
    assert out.read_text(encoding="utf-8") == validated
    bad = assay(db, "runs", "export", run_id, "--format", "xml")
    assert bad.returncode == 2 and "--format 'xml'" in bad.stderr
    tagged = assay(db, "runs", "tag", run_id[:8], "baseline", "team=x")
    assert tagged.returncode == 0 and "tags: baseline, team=x" in tagged.stdout
    assert "tags: baseline" in assay(db, "runs", "tag", run_id, "team=x", "--remove").stdout
    assert _run_ids(db) == [
        r["info"]["id"]
        for r in json.loads(assay(db, "runs", "list", "--tag", "baseline", "--json").stdout)
    ]
    unconfirmed = assay(db, "runs", "delete", run_id)  # stdin is not a terminal
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    assert _run_ids(db) == [run_id]
    deleted = assay(db, "runs", "delete", run_id[:8], "--yes")
    assert deleted.returncode == 0 and _run_ids(db) == []
    gone = assay(db, "runs", "delete", run_id, "--yes")
    assert gone.returncode == 2 and gone.stderr.count("\n") == 1


def test_a_missing_config_variable_is_named(tmp_path: Path, data: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {data}\nname: ${{ASSAY_T_NOPE}}\nscorers: [exact-match]\n")
    out = assay(tmp_path / "d.db", "run", str(config))
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        == f"error: {config}: environment variable ASSAY_T_NOPE is not set (used in 'name')"
    )


def test_init_writes_a_project_that_runs_and_refuses_to_overwrite(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    db = tmp_path / "e.db"
    made = assay(db, "init", str(project))
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in project.iterdir()) == [
        "app.py",
        "assay.yaml",
        "data.jsonl",
        "test_app.py",
    ]
    ran = assay(db, "run", "assay.yaml", cwd=project)
    assert ran.returncode == 0, ran.stderr
    assert "mean: 1.000" in ran.stdout
    again = assay(db, "init", str(project))
    assert again.returncode == 2 and "--force" in again.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_view_serves_an_exported_run_without_its_database(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "f.db"
    assert assay(db, "run", "--data", str(data), "-s", "exact-match").returncode == 0
    (run_id,) = _run_ids(db)
    exported = tmp_path / "run.json"
    assert assay(db, "runs", "export", run_id, "-o", str(exported)).returncode == 0
    db.unlink()
    port = _free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", str(exported), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        page = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                url = f"http://127.0.0.1:{port}/runs/{run_id}"
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.3)
        assert run_id[:8] in page, proc.stderr.read() if proc.poll() is not None else page[:500]
        assert "q5" in page or "a/b?c" in page or "12" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not db.exists()


def test_view_of_a_bad_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "other"}')
    out = assay(tmp_path / "g.db", "view", str(bad))
    assert (
        out.returncode == 2
        and out.stderr.startswith("error: ")
        and "not a run export" in out.stderr
    )


def test_datasets_rename_moves_the_runs_and_refuses_a_bad_name(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "r.db"
    assert assay(db, "datasets", "import", str(data), "--name", "qa").returncode == 0
    assert assay(db, "datasets", "create", "other").returncode == 0
    assert assay(db, "run", "--dataset", "qa", "-s", "exact-match").returncode == 0
    renamed = assay(db, "datasets", "rename", "qa", "team/qa v2")
    assert renamed.returncode == 0 and renamed.stdout.strip() == "renamed qa to team/qa v2"
    (run,) = json.loads(assay(db, "runs", "list", "--json").stdout)
    assert run["info"]["dataset_name"] == "team/qa v2"
    taken = assay(db, "datasets", "rename", "team/qa v2", "other")
    assert taken.returncode == 2
    assert taken.stderr.strip() == "error: dataset 'other' already exists"
    dots = assay(db, "datasets", "rename", "other", "..")
    assert dots.returncode == 2
    assert dots.stderr.strip() == (
        "error: dataset name '..' cannot be addressed in a URL: choose another"
    )
    names = [d["name"] for d in json.loads(assay(db, "datasets", "list", "--json").stdout)]
    assert names == ["other", "team/qa v2"]
