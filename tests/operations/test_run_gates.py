"""``RunGates``: ``assay run``'s gates parsed from the CLI's words, checked against the
scorers before the first item, judged on the finished summary."""

from __future__ import annotations

import pytest

from assay.analysis.gates import GateError
from assay.operations.run_gates import RunGates
from assay.types import RunSummary, ScorerSummary


def _summary(mean: float, *, errors: int = 0) -> RunSummary:
    scorer = ScorerSummary(
        scorer_id="exact-match",
        scorer_label="Exact Match",
        count=10,
        mean=mean,
        ci_low=mean - 0.1,
        ci_high=mean + 0.1,
    )
    return RunSummary(items=10, results=10, item_errors=errors, scorers={"exact-match": scorer})


def test_the_cli_words_parse_into_gates() -> None:
    gates = RunGates.parse(["exact-match=0.5"], on="ci", max_errors="10%")
    assert gates.fail_under == {"exact-match": 0.5} and gates.on == "ci"
    assert gates.max_errors is not None and gates.max_errors.allowed(10) == 1


@pytest.mark.parametrize(
    ("fail_under", "on", "max_errors", "message"),
    [
        ([], "median", None, "--gate-on 'median': expected 'mean' or 'ci'"),
        (["exact-match"], "mean", None, "--fail-under"),
        (["exact-match=high"], "mean", None, "--fail-under"),
        ([], "mean", "many", "--max-errors"),
    ],
)
def test_bad_words_name_their_flag(
    fail_under: list[str], on: str, max_errors: str | None, message: str
) -> None:
    with pytest.raises(GateError, match=message):
        RunGates.parse(fail_under, on=on, max_errors=max_errors)


def test_a_threshold_on_no_scorer_of_the_run_is_refused_before_it_runs() -> None:
    gates = RunGates.parse(["exact-macth=0.5"])
    with pytest.raises(GateError, match="did you mean 'exact-match'"):
        gates.check_scorers(["exact-match", "content-similarity"])
    RunGates.parse(["exact-match=0.5"]).check_scorers(["exact-match"])  # by id: fine
    RunGates().check_scorers(["no-such-scorer"])  # no thresholds: nothing is built


def test_the_finished_run_is_judged_on_its_summary() -> None:
    gates = RunGates.parse(["exact-match=0.5"], on="ci", max_errors="0")
    assert gates.failures(_summary(0.7)) == []
    low = gates.failures(_summary(0.55))  # mean above, pessimistic CI bound below
    assert [f.gate for f in low] == ["fail-under"]
    errored = gates.failures(_summary(0.9, errors=2))
    assert [f.gate for f in errored] == ["max-errors"]
