"""Reading an exported run back (``assay view``): hostile files are one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.operations.reports import export_run
from assay.operations.run_import import RunImportError, import_run
from assay.operations.stored_runs import run_stored
from assay.store import open_store


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    store = open_store(f"sqlite:///{tmp_path / 'src.db'}")
    rows = [
        {"id": f"q/{k}?", "input": "x", "output": f"a{k}", "expected_output": "a1"}
        for k in range(5)
    ]
    result = run_stored(rows, None, ["exact-match"], store=store)
    path = tmp_path / "run.json"
    export_run(result.id, path, store=store)
    store.close()
    return path


def test_an_export_round_trips_into_a_fresh_store(tmp_path: Path, exported: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'view.db'}")
    record = import_run(exported, store)
    results = list(store.runs.results(record.id))
    assert record.status == "completed" and record.completed_results == 5
    assert sorted(r.item_id for r in results) == [f"q/{k}?" for k in range(5)]
    assert record.summary is not None and record.summary.scorers["exact-match"].mean == 0.2
    store.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a JSON file"),
        ("[1, 2]", "not a run export"),
        ('{"format": "assay.run", "run": {"info": 3}}', "run: "),
        ("[" * 100_000, "not a JSON file"),
    ],
)
def test_a_bad_file_is_one_line_and_stores_nothing(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    store = open_store(f"sqlite:///{tmp_path / 'view.db'}")
    with pytest.raises(RunImportError, match=message) as caught:
        import_run(path, store)
    assert "\n" not in str(caught.value)
    assert store.runs.list() == []
    store.close()


def test_a_bad_result_row_is_named_and_nothing_is_stored(tmp_path: Path, exported: Path) -> None:
    doc = json.loads(exported.read_text())
    doc["results"][3]["repeat"] = "three"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    store = open_store(f"sqlite:///{tmp_path / 'view.db'}")
    with pytest.raises(RunImportError, match=r"results\[3\]: repeat"):
        import_run(bad, store)
    doc["results"][3] = doc["results"][2]
    bad.write_text(json.dumps(doc))
    with pytest.raises(RunImportError, match="appears twice"):
        import_run(bad, store)
    assert store.runs.list() == []
    store.close()
