"""A target returning ``None`` is not a silent 0: the item carries a warning that runs show
and the HTML report display."""

from __future__ import annotations

from pathlib import Path

from assay.analysis.report_html import render_html_report
from assay.operations.stored_runs import run_stored
from assay.runner.engine import NONE_OUTPUT_WARNING
from assay.store import open_store


def _forgot_return(input: str) -> str | None:
    if input == "q1":
        return None
    return input.upper()


def test_a_none_output_is_an_item_warning_kept_in_the_store(tmp_path: Path) -> None:
    items = [{"id": f"i{k}", "input": f"q{k}", "expected_output": f"Q{k}"} for k in range(3)]
    with open_store(f"sqlite:///{tmp_path / 'none.db'}") as store:
        run = run_stored(items, _forgot_return, ["exact-match"], store=store, progress=False)
        results = {r.item_id: r for r in store.runs.results(run.id)}
        record = store.runs.get(run.id)
        html = render_html_report(record, list(results.values()))
    assert results["i1"].output is None
    assert results["i1"].warnings == [NONE_OUTPUT_WARNING]
    assert results["i0"].warnings == [] and results["i2"].warnings == []
    assert f"warning: {NONE_OUTPUT_WARNING}" in html
