"""Writing a run's reports: after a run, as an export, for a comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.operations.reports import (
    ReportError,
    export_run,
    write_comparison_report,
    write_run_reports,
)
from assay.operations.stored_runs import compare_stored, run_stored
from assay.runner.api import run_evals
from assay.store import Store, open_store

ROWS = [
    {"id": "a", "input": "paris", "expected_output": "PARIS"},
    {"id": "b", "input": "rome", "expected_output": "nope"},
]


def upper(text: str) -> str:
    return text.upper()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(f"sqlite:///{tmp_path / 'assay.db'}")


def test_in_memory_run_reports(tmp_path: Path) -> None:
    run = run_evals(ROWS, upper, ["exact-match"], progress=False)
    written = write_run_reports(run, report=tmp_path / "r.html", json_path=tmp_path / "r.json")
    assert written == [tmp_path / "r.html", tmp_path / "r.json"]
    assert "exact-match" in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["run"]["info"]["id"] == run.id
    assert write_run_reports(run) == []


def test_stored_run_reports_and_export(tmp_path: Path, store: Store) -> None:
    with store:
        run = run_stored(ROWS, upper, ["exact-match"], store=store, progress=False)
        written = write_run_reports(run, json_path=tmp_path / "s.json", stored=True, store=store)
        assert written == [tmp_path / "s.json"]
        assert export_run(run.id[:8], tmp_path / "e.htm", store=store).exists()
        assert export_run(run.id, tmp_path / "e.json", store=store).exists()
        with pytest.raises(ReportError, match=r"use a \.json or \.html file name"):
            export_run(run.id, tmp_path / "e.txt", store=store)
        again = run_stored(ROWS, str.lower, ["exact-match"], store=store, progress=False)
        comparison = compare_stored(run.id, again.id, store=store)
        path = write_comparison_report(comparison, tmp_path / "cmp.html", store=store)
        assert path.exists() and again.id[:8] in path.read_text()
