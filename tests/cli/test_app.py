"""The CLI as users run it: a real subprocess, exit codes, stdout/stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd or tempfile.gettempdir(),
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"},
    )


def test_scorers_list_shows_every_code_scorer() -> None:
    proc = assay("scorers", "list")
    assert proc.returncode == 0, proc.stderr
    for type_id in ("completeness", "content-similarity", "tone", "trajectory-code"):
        assert type_id in proc.stdout
    assert "lower is better" not in proc.stdout or "higher is better" in proc.stdout


def test_scorers_list_json_has_schemas() -> None:
    proc = assay("scorers", "list", "--json")
    data = json.loads(proc.stdout)
    by_type = {entry["type"]: entry for entry in data}
    assert by_type["tone"]["params_schema"]["properties"]["reference_tone"]["default"] is None


def test_scorers_show_lists_params_with_defaults() -> None:
    proc = assay("scorers", "show", "content-similarity")
    assert proc.returncode == 0, proc.stderr
    assert "ignore_case" in proc.stdout and "boolean" in proc.stdout and "true" in proc.stdout
    assert "higher is better" in proc.stdout


def test_scorers_show_prints_a_judges_overridable_prompts() -> None:
    proc = assay("scorers", "show", "toxicity")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "override with param 'templates.analyze'" in text
    assert "Give one verdict per opinion in the response" in text
    assert "override with param 'instructions'" in text


def test_score_prints_a_score() -> None:
    proc = assay(
        "score",
        "content-similarity",
        "--input",
        "The Quick Brown FOX",
        "--output",
        "the quick brown fox",
        "--param",
        "ignore_case=false",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ready"
    assert abs(result["score"] - 0.4666666666666667) < 1e-12


def test_score_reads_files_and_json_messages(tmp_path: Path) -> None:
    output = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
    ]
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(output))
    proc = assay(
        "score",
        "tool-call-accuracy-code",
        "--input",
        "Weather?",
        "--output",
        f"@{path}",
        "--param",
        "expected_tool=get_weather",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("score", "content-similarty", "--output", "x"), "did you mean 'content-similarity'"),
        (
            ("score", "tone", "--output", "x", "--param", "colour=red"),
            "param 'colour' is not allowed",
        ),
        (("score", "tone", "--output", "x", "--param", "oops"), "expected key=value"),
        (("score", "tone", "--output", "@/no/such/file.txt"), "cannot read /no/such/file.txt"),
        (("scorers", "show", "nope"), "unknown scorer type 'nope'"),
        (("demo", "--data", "/no/such/data.jsonl"), "cannot read /no/such/data.jsonl"),
    ],
)
def test_bad_input_is_one_clear_line_and_non_zero(args: tuple[str, ...], message: str) -> None:
    proc = assay(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_demo_scores_the_bundled_dataset(tmp_path: Path) -> None:
    # its own folder: the demo stores into ./.assay, and one shared with other checkouts may
    # hold a database migrated by a newer tree
    proc = assay("demo", "--no-judge", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "capital-fr" in proc.stdout and "weather-tool" in proc.stdout
    assert "mean" in proc.stdout


def test_demo_reports_a_bad_line_with_its_number(tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": \n')
    proc = assay("demo", "--data", str(data), cwd=tmp_path)
    assert proc.returncode == 2
    assert "line 2" in proc.stderr
