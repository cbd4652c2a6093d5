"""The pytest plugin, driven by ``pytester``: suites that pass, fail on a threshold, repeat
across it, regress against a baseline; their stored runs, JUnit properties and summary.

The shared venv's install does not carry the plugin's entry point before a reinstall, so
every inner session loads it by name (``-p assay_pytest``), as the entry point would.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from assay.store import open_store

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "assay_pytest")

ROWS = [
    {"id": "refund", "input": "refund window?", "output": "30 days", "expected_output": "30 days"},
    {"id": "hours", "input": "opening hours?", "output": "9 to 5", "expected_output": "9 to 5"},
    {"id": "ship", "input": "shipping?", "output": "free", "expected_output": "free over 50"},
]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    for name in ("ASSAY_DATABASE_URL", "GITHUB_SHA", "GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CI_COMMIT_SHA", raising=False)
    monkeypatch.delenv("CI_COMMIT_REF_NAME", raising=False)


def _data(pytester: pytest.Pytester, rows: list[dict[str, str]] = ROWS) -> Path:
    path = pytester.path / "support.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _store(pytester: pytest.Pytester):  # type: ignore[no-untyped-def]
    return open_store(str(pytester.path / ".assay" / "assay.db"))


PASSING = """
import pytest
from assay.testing import assert_score, cases

@pytest.mark.parametrize("case", cases("support.jsonl"))
def test_answers(case):
    if case.id == "ship":
        return
    assert_score("exact-match", output=case.output, expected_output=case.expected_output, min=1)

def test_dataset(assay_eval):
    report = assay_eval("support.jsonl", None, ["exact-match"], fail_under={"exact-match": 0.6})
    assert report.passed
"""


def test_a_passing_suite_stores_one_run_per_test_tagged_with_the_session(
    pytester: pytest.Pytester,
) -> None:
    _data(pytester)
    pytester.makepyfile(test_support=PASSING)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*assay: 2 run(s) stored (session *",
            "*assay: test_support.py::test_answers: exact-match 1 [[]1, 1[]] · run *",
            "*assay: test_support.py::test_dataset: exact-match 0.667 [[]0, 1[]] · run *",
        ]
    )
    with _store(pytester) as db:
        runs = {r.info.name: r for r in db.runs.list()}
        assert set(runs) == {"test_support.py::test_answers", "test_support.py::test_dataset"}
        cases_run = runs["test_support.py::test_answers"]
        # one item per case that called assert_score, named by its parametrize id
        assert [i.id for i in db.runs.inline_items(cases_run.id)] == ["refund", "hours"]
        assert cases_run.summary is not None
        assert cases_run.summary.scorers["exact-match"].mean == 1.0
        dataset_run = runs["test_support.py::test_dataset"]
        assert dataset_run.summary is not None
        assert dataset_run.summary.scorers["exact-match"].mean == pytest.approx(2 / 3)
        session_tags = {t for t in cases_run.info.tags if t.startswith("assay.session=")}
        assert len(session_tags) == 1 and "pytest" in cases_run.info.tags
        assert session_tags <= set(dataset_run.info.tags)


def test_a_case_is_rerun_alone_by_its_item_id(pytester: pytest.Pytester) -> None:
    _data(pytester)
    pytester.makepyfile(test_support=PASSING)
    result = pytester.runpytest(*PLUGIN, "-k", "hours", "--assay-no-store")
    result.assert_outcomes(passed=1, deselected=3)
    assert not (pytester.path / ".assay").exists()


FAILING = """
from assay.testing import assert_score

def test_wrong_answer():
    assert_score("exact-match", output="60 days", expected_output="30 days", min=1)

def test_dataset_below_its_gate(assay_eval):
    assay_eval("support.jsonl", None, ["exact-match"], fail_under={"exact-match": 0.9})

def test_lower_is_better_gate(assay_eval):
    assay_eval("support.jsonl", None, [{"type": "exact-match", "id": "em"}],
               fail_under={"em": 0.9}, gate_on="ci")
"""


def test_a_threshold_failure_names_score_limit_and_reason(pytester: pytest.Pytester) -> None:
    _data(pytester)
    pytester.makepyfile(test_fail=FAILING)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=0, failed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    assert "exact-match: score 0, min 1; output '60 days' vs expected '30 days'" in text
    assert "exact-match: mean 0.6667 is below 0.9 (higher is better)" in text
    assert "em: lower CI bound" in text and "is below 0.9" in text


def test_an_unknown_scorer_in_a_gate_is_named(pytester: pytest.Pytester) -> None:
    _data(pytester)
    pytester.makepyfile(
        test_bad="""
def test_typo(assay_eval):
    assay_eval("support.jsonl", None, ["exact-match"], fail_under={"exact-mach": 0.5})
"""
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no scorer 'exact-mach'*did you mean 'exact-match'*"])


REPEATS = """
import itertools
import pytest
import assay
from assay.testing import assert_score

_flips = itertools.cycle([1.0, 0.0, 1.0])
FLAKY = assay.Scorer("flaky").score(lambda ctx: next(_flips))

@pytest.mark.parametrize("require", ["all", "any", "mean"])
def test_straddling(require):
    assert_score(FLAKY, output="x", min=0.5, repeats=3, require=require)

def test_reused():
    assert_score(FLAKY, output="x", min=0.5, repeats=3, require="any", reuse_cache=True)
"""


def test_repeats_that_straddle_the_limit_follow_the_declared_rule(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_repeats=REPEATS)
    result = pytester.runpytest(*PLUGIN, "-p", "no:randomly", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1, passed=3)
    text = result.stdout.str()
    assert "test_straddling[all] - AssertionError: flaky: scores" in text
    assert "require='all' (every repeat must pass); pass^3 no, pass@3 yes, flipped" in text
    assert "model cache bypassed" in text
    assert "mean 0.6667 (95% CI 0..1)" in text
    root = ET.parse(pytester.path / "junit.xml").getroot()
    props = {
        tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")}
        for tc in root.iter("testcase")
    }
    anyrule = props["test_straddling[any]"]
    assert anyrule["assay.flaky.require"] == "any"
    assert anyrule["assay.flaky.pass_all"] == "false"
    assert anyrule["assay.flaky.pass_any"] == "true"
    assert anyrule["assay.flaky.flipped"] == "true"
    assert anyrule["assay.flaky.min"] == "0.5"
    assert sorted(anyrule["assay.flaky.scores"].split(",")) == ["0", "1", "1"]
    assert anyrule["assay.flaky.ci"] == "0..1"
    assert anyrule["assay.flaky.cache"] == "bypassed"
    assert props["test_reused"]["assay.flaky.cache"] == "reused"


DATASET_REPEATS = """
import itertools
import assay

_flips = itertools.cycle([1.0, 0.0])
FLAKY = assay.Scorer("flaky").score(lambda ctx: next(_flips))

def test_rows(assay_eval):
    assay_eval("support.jsonl", None, [FLAKY], fail_under={"flaky": 0.5},
               repeats=2, require="all", concurrency=1)
"""


def test_a_dataset_test_with_repeats_gates_on_pass_all(pytester: pytest.Pytester) -> None:
    _data(pytester)
    pytester.makepyfile(test_rows=DATASET_REPEATS)
    result = pytester.runpytest(*PLUGIN, "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    # every item scores 1 then 0: the mean of the repeats passes, pass^2 is 0
    assert "flaky: mean 0 is below 0.5" in text
    assert "pass^2 0%, pass@2 100%, flip rate 100% at 0.5" in text
    props = {
        p.get("name"): p.get("value")
        for p in ET.parse(pytester.path / "junit.xml").iter("property")
    }
    assert props["assay.flaky.flip_rate"] == "1"
    assert props["assay.flaky.mean"] == "0.5"


BASELINE = """
import os
from assay.testing import assert_score

ANSWERS = {"q1": "a", "q2": "b", "q3": "c", "q4": "d", "q5": "e", "q6": "f"}
import pytest

@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_bot(qid):
    good = os.environ.get("BOT") == "good"
    assert_score("exact-match", output=ANSWERS[qid] if good else "?",
                 expected_output=ANSWERS[qid], min=0)
"""


def test_a_baseline_regression_fails_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_bot=BASELINE)
    monkeypatch.setenv("BOT", "good")
    missing = pytester.runpytest(*PLUGIN, "--assay-baseline", "main")
    assert missing.ret == 0  # a missing baseline is one line, not a failure
    missing.stdout.fnmatch_lines(["*no baseline run tagged 'baseline=main'*"])
    first = pytester.runpytest(*PLUGIN, "--assay-baseline", "main", "--assay-update-baseline")
    assert first.ret == 0
    first.stdout.fnmatch_lines(["*baseline 'baseline=main' is now this session's 1 run(s)*"])
    monkeypatch.setenv("BOT", "bad")
    summary = pytester.path / "out" / "summary.md"
    second = pytester.runpytest(
        *PLUGIN, "--assay-baseline", "main", "--assay-summary", str(summary)
    )
    second.assert_outcomes(passed=6)  # every case passes its own limit (min 0) ...
    assert second.ret == pytest.ExitCode.TESTS_FAILED  # ... but the run regressed
    second.stdout.fnmatch_lines(["*REGRESSION test_bot.py::test_bot*significant regression*"])
    text = summary.read_text(encoding="utf-8")
    assert "1 significant regression(s)" in text
    assert "| 🔴 |" in text and "regressed (n=6)" in text
    assert "`q1`: 1 → 0 (-1)" in text
    with _store(pytester) as db:
        holders = db.runs.list(tag="baseline=main")
        assert len(holders) == 1 and holders[0].summary is not None
        assert holders[0].summary.scorers["exact-match"].mean == 1.0


def test_a_branch_tag_is_a_baseline_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_bot=BASELINE)
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    monkeypatch.setenv("BOT", "good")
    assert pytester.runpytest(*PLUGIN).ret == 0
    monkeypatch.setenv("BOT", "bad")  # still on main: compared with the last main session
    result = pytester.runpytest(*PLUGIN, "--assay-baseline", "git.branch=main")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*REGRESSION*"])
    monkeypatch.setenv("GITHUB_REF_NAME", "feature")
    monkeypatch.setenv("BOT", "good")  # on a branch: against the newest main run (the bad one)
    better = pytester.runpytest(*PLUGIN, "--assay-baseline", "git.branch=main")
    assert better.ret == 0
    better.stdout.fnmatch_lines(["*no significant regression vs baseline*"])


def test_a_broken_store_is_one_line_and_exit_code_3(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bot=BASELINE)
    (pytester.path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    result = pytester.runpytest(*PLUGIN, "--assay-db", str(pytester.path / "blocked" / "x.db"))
    result.stdout.fnmatch_lines(["*assay: error: could not finish the session's runs:*"])
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR


STORED = """
import pytest
from assay.testing import assert_score, cases

@pytest.mark.parametrize("case", cases("faq@1"))
def test_v1(case):
    assert_score("exact-match", output=case.output, expected_output=case.expected_output, min=0)

def test_latest():
    assert [c.id for c in (p.values[0] for p in cases("faq"))] == ["refund", "hours", "ship", "new"]

def test_pinned_run(assay_eval):
    report = assay_eval("faq@1", None, ["exact-match"], fail_under={"exact-match": 0.5})
    assert report.record.info.dataset_version == 1
    assert report.record.info.dataset_name == "faq"
"""


def test_stored_datasets_by_name_and_version(pytester: pytest.Pytester) -> None:
    other = pytester.path / "other.db"  # --assay-db: cases() and assay_eval read it too
    with open_store(str(other)) as db:
        db.datasets.create("faq")
        db.datasets.add_items("faq", ROWS)
        db.datasets.add_items(
            "faq", [{"id": "new", "input": "?", "output": "x", "expected_output": "x"}]
        )
    pytester.makepyfile(test_stored=STORED)
    result = pytester.runpytest(*PLUGIN, "-v", "--assay-db", str(other))
    result.assert_outcomes(passed=5)
    assert not (pytester.path / ".assay").exists()
    result.stdout.fnmatch_lines(["*test_v1?refund? PASSED*", "*test_v1?ship? PASSED*"])


def test_an_unknown_dataset_fails_collection_with_its_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_missing="""
import pytest
from assay.testing import cases

@pytest.mark.parametrize("case", cases("nosuch@2"))
def test_x(case):
    pass
"""
    )
    result = pytester.runpytest(*PLUGIN)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error, like pytest's own
    result.stdout.fnmatch_lines(["*nosuch*"])


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ("", "needs min= and/or max="),
        ("min=float('nan')", "min=nan: expected a finite number"),
        ("min=True", "min=True: expected a finite number"),
        ("min=0.9, max=0.1", "min 0.9 is above max 0.1"),
        ("min=0, require='most'", "require='most': expected one of"),
        ("min=0, repeats=0", "repeats must be at least 1"),
        ("min=0, output=None", "an item needs 'input' or 'output'"),
    ],
)
def test_bad_arguments_are_named(pytester: pytest.Pytester, limits: str, message: str) -> None:
    call = f"assert_score('exact-match', {limits}{', ' if limits else ''}output='a')"
    if "output=None" in limits:
        call = f"assert_score('exact-match', {limits})"
    pytester.makepyfile(
        test_bad=f"""
from assay.testing import assert_score

def test_x():
    {call}
"""
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*{message}*"])


def test_a_failing_session_does_not_become_the_baseline(pytester: pytest.Pytester) -> None:
    _data(pytester)
    pytester.makepyfile(test_fail=FAILING)
    result = pytester.runpytest(*PLUGIN, "--assay-update-baseline")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*baseline 'baseline=default' not updated: the session failed*"])
    with _store(pytester) as db:
        assert db.runs.list(tag="baseline=default") == []
        assert len(db.runs.list()) == 3  # the runs are stored all the same


def test_git_variables_are_cleaned_into_tags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from assay.testing.session import git_tags

    monkeypatch.setenv("GITHUB_SHA", "abc\n123")
    monkeypatch.setenv("GITHUB_REF_NAME", "x" * 400)
    tags = git_tags(tmp_path)
    assert tags[0] == "git.commit=abc123"
    assert tags[1].startswith("git.branch=xxx") and len(tags[1]) == 255
    monkeypatch.setenv("GITHUB_SHA", "\t\n")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    assert git_tags(tmp_path) == ["git.branch=main"]  # tmp_path is no repository
