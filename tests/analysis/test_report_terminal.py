from __future__ import annotations

from rich.console import Console

from assay.analysis.compare import compare_runs
from assay.analysis.report_terminal import comparison_table, regressions_table, summary_table
from assay.summary.accumulator import SummaryAccumulator

from .factories import record, result, rows, score, spec


def _render(*renderables: object) -> str:
    console = Console(record=True, width=220, color_system=None)
    for r in renderables:
        console.print(r)
    return console.export_text()


def test_summary_table_shows_statistics_and_directions() -> None:
    acc = SummaryAccumulator()
    for k, (v, d) in enumerate([(0.2, 0.9), (0.4, 0.1), (0.9, None)]):
        scores = {"acc": score(v), "[bold]tox[/bold]": score(d, scorer_id="tox")}
        acc.add(result(f"i{k}", k, scores, latency_ms=10.0 * (k + 1)))
    specs = [spec("acc"), spec("[bold]tox[/bold]", higher_is_better=False)]
    rec = record(
        scorers=specs, threshold=0.5, summary=acc.summary(specs, threshold=0.5, duration_s=2.0)
    )
    text = _render(summary_table(rec))
    acc_line = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("acc"))
    assert "↑" in acc_line and "0.500" in acc_line and "33.3%" in acc_line  # mean, pass rate
    tox_line = next(line for line in text.splitlines() if "tox" in line)
    assert "[bold]tox[/bold]" in tox_line  # shown literally, not as markup
    assert "↓" in tox_line and "50.0%" in tox_line and "1" in tox_line
    assert "pass@0.5" in text and "items 3" in text and "target errors 0" in text


def test_summary_table_without_summary() -> None:
    text = _render(summary_table(record(status="interrupted")))
    assert "no summary yet" in text and "interrupted" in text


def test_comparison_and_regressions_tables() -> None:
    a_rows = rows({"x": [0.9], "y": [0.8], "z": [0.1], "only-a": [1.0]})
    b_rows = rows({"x": [0.3], "y": [0.7], "z": [0.6]})
    cmp = compare_runs(record("run-a"), a_rows, record("run-b", version=2), b_rows)
    text = _render(comparison_table(cmp), regressions_table(cmp))
    assert "run-a" in text and "run-b" in text
    assert "-0.067" in text  # delta of means: (-0.6 - 0.1 + 0.5) / 3
    assert "only in A 1" in text and "version differs" in text
    reg = text[text.index("Regressed items") :]
    assert reg.index("x") < reg.index("y")  # worst first
    assert "-0.600" in reg and "│ z " not in reg  # z improved
    capped = _render(regressions_table(cmp, limit=1))
    assert "1 more not shown" in capped


def test_comparison_table_with_top_stacks_both_directions() -> None:
    a_rows = rows({"x": [0.9], "y": [0.8], "z": [0.1], "w": [0.2]})
    b_rows = rows({"x": [0.3], "y": [0.7], "z": [0.6], "w": [0.3]})
    cmp = compare_runs(record("run-a"), a_rows, record("run-b"), b_rows)
    text = _render(comparison_table(cmp, top=1))
    assert text.index("Δ B−A") < text.index("Regressed items") < text.index("Improved items")
    regressed = text[text.index("Regressed items") : text.index("Improved items")]
    improved = text[text.index("Improved items") :]
    assert "-0.600" in regressed and "1 more not shown" in regressed
    assert "+0.500" in improved and "1 more not shown" in improved


def test_empty_item_sections_are_not_printed() -> None:
    a_rows = rows({"x": [0.9], "y": [0.8]})
    b_rows = rows({"x": [0.3], "y": [0.2]})  # everything got worse, nothing improved
    cmp = compare_runs(record("run-a"), a_rows, record("run-b"), b_rows)
    text = _render(comparison_table(cmp, top=5))
    assert "Regressed items" in text and "Improved items" not in text
