"""The CI Markdown summary: regressions first, escaped names, and never over the limit."""

from __future__ import annotations

from assay.analysis.compare import ItemDelta, RunComparison, RunRef, ScorerComparison
from assay.analysis.report_markdown import GITHUB_COMMENT_LIMIT, SummaryEntry, ci_markdown
from assay.types import RunInfo, RunRecord, RunSummary, ScorerSummary, TargetSpec


def _record(run_id: str, name: str, scorers: dict[str, float], tags: list[str] = []) -> RunRecord:  # noqa: B006
    summary = RunSummary(
        scorers={
            k: ScorerSummary(scorer_id=k, scorer_label=k, mean=v, ci_low=v - 0.1, ci_high=v + 0.1)
            for k, v in scorers.items()
        }
    )
    info = RunInfo(id=run_id, name=name, target=TargetSpec(kind="callable", label="t"), tags=tags)
    return RunRecord(info=info, status="completed", summary=summary)


def _comparison(
    a: RunRecord, b: RunRecord, verdicts: dict[str, str], n_items: int = 3
) -> RunComparison:
    scorers = []
    for key, verdict in verdicts.items():
        deltas = [
            ItemDelta(item_id=f"item-{i}", score_a=1.0, score_b=0.0, delta=-1.0)
            for i in range(n_items)
        ]
        scorers.append(
            ScorerComparison(
                scorer_id=key,
                scorer_label=key,
                n_paired=n_items,
                mean_a=0.9,
                mean_b=0.5,
                delta=-0.4,
                ci_low=-0.6,
                ci_high=-0.2,
                verdict=verdict,  # type: ignore[arg-type]
                regressed=deltas if verdict == "regressed" else [],
            )
        )
    return RunComparison(a=RunRef.of(a), b=RunRef.of(b), scorers=scorers)


def test_regressions_come_first_with_links_and_items() -> None:
    base = _record("b" * 32, "test_x", {"good": 0.9, "bad": 0.9})
    run = _record("r" * 32, "test_x", {"good": 0.9, "bad": 0.5}, tags=["git.branch=main"])
    cmp = _comparison(base, run, {"good": "not_significant", "bad": "regressed"})
    text = ci_markdown([SummaryEntry(run, base, cmp)], server_url="http://ci.example/", title="T")
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith("| ") and "run |" not in line]
    assert rows[0].startswith("| 🔴 | [test_x](http://ci.example/runs/" + "r" * 32 + ") | bad |")
    assert "| good |" in rows[1]
    assert "`git.branch=main`" in text and "1 significant regression(s)" in text
    assert "- test_x · bad · `item-0`: 1 → 0 (-1)" in text


def test_names_cannot_break_the_table() -> None:
    run = _record("r" * 32, "a | b\nc <script>", {"s|x": 0.5})
    text = ci_markdown([SummaryEntry(run)])
    row = next(line for line in text.splitlines() if "0.5 [" in line)
    assert row.count(" | ") == 6  # 7 cells: none added by the names
    assert "a \\| b c &lt;script>" in row and "no baseline" in row


def test_a_huge_run_is_cut_to_fit_a_comment_with_a_count() -> None:
    scorers = {f"scorer-{i:05d}-" + "x" * 40: 0.5 for i in range(3000)}
    base = _record("b" * 32, "t", scorers)
    run = _record("r" * 32, "t", scorers)
    cmp = _comparison(base, run, dict.fromkeys(scorers, "regressed"), n_items=30)
    text = ci_markdown([SummaryEntry(run, base, cmp)])
    assert len(text) <= GITHUB_COMMENT_LIMIT
    shown = sum(1 for line in text.splitlines() if line.startswith("| 🔴 |"))
    assert 0 < shown < 3000
    assert f"_… {3000 - shown} more row(s) and " in text
    assert "more regressed item(s) not shown: a comment holds 65,536 characters" in text


def test_items_are_cut_after_every_row_fits() -> None:
    scorers = {f"s{i}": 0.5 for i in range(5)}
    base, run = _record("b" * 32, "t", scorers), _record("r" * 32, "t", scorers)
    cmp = _comparison(base, run, dict.fromkeys(scorers, "regressed"), n_items=12)
    text = ci_markdown([SummaryEntry(run, base, cmp)], limit=2500)
    assert len(text) <= 2500
    assert sum(1 for line in text.splitlines() if line.startswith("| 🔴 |")) == 5
    assert "more regressed item(s) not shown" in text and "more row(s)" not in text


def test_hostile_item_ids_stay_inside_their_code_span() -> None:
    base = _record("b" * 32, "t", {"s": 0.9})
    run = _record("r" * 32, "t", {"s": 0.1})
    cmp = _comparison(base, run, {"s": "regressed"}, n_items=1)
    hostile = ItemDelta(item_id="a`b\n| x |", score_a=1.0, score_b=0.0, delta=-1.0)
    scorer = cmp.scorers[0].model_copy(update={"regressed": [hostile]})
    cmp = cmp.model_copy(update={"scorers": [scorer]})
    text = ci_markdown([SummaryEntry(run, base, cmp)])
    line = next(x for x in text.splitlines() if x.startswith("- t · s · "))
    assert line == "- t · s · `a'b | x |`: 1 → 0 (-1)"
