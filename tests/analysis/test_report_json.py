from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.analysis.report_json import run_report_dict, write_json_file, write_run_json
from assay.summary.accumulator import SummaryAccumulator
from assay.types import ItemResult, RunRecord

from .factories import record, result, score, spec


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque>"


def _results() -> list[ItemResult]:
    return [
        result("a", 0, {"acc": score(1.0, reason="exact")}, input={"q": "2+2?", "n": [1, 2]}),
        result("b", 1, {"acc": score(None)}, output=math.nan),
        result("c", 2, {}, error="timeout"),
        result("d", 3, {"acc": score(0.5)}, output=Opaque()),
    ]


def _record() -> RunRecord:
    acc = SummaryAccumulator()
    for r in _results():
        acc.add(r)
    summary = acc.summary([spec()], threshold=0.5, duration_s=1.0)
    return record(threshold=0.5, summary=summary)


def test_streamed_file_round_trips_to_the_in_memory_document(tmp_path: Path) -> None:
    rec = _record()
    path = tmp_path / "run.json"
    n = write_run_json(path, rec, iter(_results()))
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert n == 4
    assert loaded == run_report_dict(rec, _results())
    assert loaded["format"] == "assay.run" and loaded["format_version"] == 1
    assert RunRecord.model_validate(loaded["run"]) == rec
    restored = [ItemResult.model_validate(r) for r in loaded["results"][:3]]
    assert restored[0] == _results()[0]
    assert restored[2].error is not None and restored[2].error.message == "timeout"
    assert loaded["results"][1]["output"] is None  # NaN -> null, strict JSON
    assert loaded["results"][3]["output"] == "<Opaque>"
    assert loaded["run"]["summary"]["scorers"]["acc"]["count"] == 2


def test_empty_run(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    assert write_run_json(path, record(), []) == 0
    assert json.loads(path.read_text())["results"] == []


def test_failed_export_leaves_no_file(tmp_path: Path) -> None:
    def broken() -> Iterator[ItemResult]:
        yield _results()[0]
        raise RuntimeError("store went away")

    path = tmp_path / "run.json"
    with pytest.raises(RuntimeError):
        write_run_json(path, record(), broken())
    assert list(tmp_path.iterdir()) == []


def test_a_json_document_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    value = {"aggregate": {"acc,none": 0.5}, "name": "é"}
    written = write_json_file(tmp_path / "deep" / "out.json", value)
    assert written == tmp_path / "deep" / "out.json"
    assert json.loads(written.read_text(encoding="utf-8")) == value
    assert "é" in written.read_text(encoding="utf-8")  # non-ASCII kept
    with pytest.raises(TypeError):  # not JSON: nothing replaces the earlier file
        write_json_file(written, {"bad": object()})
    assert json.loads(written.read_text(encoding="utf-8")) == value
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["out.json"]
