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
