"""``assay runs export`` of a run holding a lone surrogate and awkward numbers, as users run
it (a real subprocess, a real SQLite file): exit 0, valid UTF-8 on stdout and in the file,
the same text both ways, every value read back exactly."""

from __future__ import annotations

import json
from pathlib import Path

from assay.store import open_store
from tests.cli.test_store_commands import assay
from tests.store.test_json_exact import mismatches, result, run_info
from tests.store.test_surrogate_exports import results as surrogate_results


def test_jsonl_and_csv_exports_of_a_lone_surrogate_and_exact_numbers(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    sent = [*surrogate_results(), result(3, 1e22), result(4, 2**64), result(5, -0.0)]
    with open_store(f"sqlite:///{db}") as store:
        store.runs.create(run_info("odd"))
        store.runs.write_results("odd", sent)
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"odd.{fmt}"
        written = assay(db, "runs", "export", "odd", "-o", str(out))
        assert written.returncode == 0, written.stderr
        shown = assay(db, "runs", "export", "odd", "--format", fmt)
        assert shown.returncode == 0, shown.stderr
        assert out.read_text(encoding="utf-8") == shown.stdout  # strict UTF-8, same text
    lines = [json.loads(line) for line in (tmp_path / "odd.jsonl").read_text().splitlines()]
    assert lines[0]["item_id"] == "id\ud800" and lines[0]["output"] == sent[0].output
    assert (
        mismatches([(r.output, line["output"]) for r, line in zip(sent, lines, strict=True)]) == []
    )
    assert "id\\ud800" in (tmp_path / "odd.csv").read_text()


def test_json_and_html_reports_of_a_lone_surrogate(tmp_path: Path) -> None:
    """``--format json`` / ``html``: the report is written (exit 0, strict UTF-8) with the
    surrogate escaped; the JSON reads back the same output. (An item id with one cannot
    come from a dataset, which refuses it, so the ids here are plain.)"""
    db = tmp_path / "r.db"
    sent = [r.model_copy(update={"item_id": f"i{n}"}) for n, r in enumerate(surrogate_results())]
    with open_store(f"sqlite:///{db}") as store:
        store.runs.create(run_info("odd"))
        store.runs.write_results("odd", sent)
    report = tmp_path / "odd.json"
    written = assay(db, "runs", "export", "odd", "-o", str(report))
    assert written.returncode == 0, written.stderr
    document = json.loads(report.read_bytes().decode("utf-8"))
    assert [r["output"] for r in document["results"]] == [r.output for r in sent]
    assert [r["error"] and r["error"]["message"] for r in document["results"]][1] == "boom\ud800"
    page = tmp_path / "odd.html"
    written = assay(db, "runs", "export", "odd", "-o", str(page))
    assert written.returncode == 0, written.stderr
    assert "\\ud800" in page.read_bytes().decode("utf-8")
