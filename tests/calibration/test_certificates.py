"""Calibration certificates: issued, matched, invalidated by a changed prompt or judge
model, and required by a run (``require_calibrated``) before any item runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.calibration.certificates import (
    CalibrationRequiredError,
    calibration_status,
    certificate_for,
    require_calibrated,
    shown_calibration_statuses,
    spec_calibration_status,
)
from assay.calibration.run import calibrate
from assay.operations.reports import write_run_reports
from assay.operations.run_config import RunConfig, run_config_async
from assay.operations.stored_runs import run_stored
from assay.runner.scorer_set import scorer_spec
from assay.scoring.registry import create_scorer
from assay.scoring.sync import run_sync
from assay.store import Store, open_store
from assay.testing.openai_server import MockOpenAIServer

from .test_run import binary_config, binary_rows, judge_scorer, write_jsonl


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = open_store(f"sqlite:///{tmp_path / 'cert.db'}")
    yield opened  # type: ignore[misc]
    opened.close()


def _calibrated(tmp_path: Path, store: Store, **gates: float) -> Any:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    judge = judge_scorer(float, instructions="Grade strictly.", model="openai/gpt-4o-mini")
    report = calibrate(binary_config(data, min=gates), scorers=[judge], store=store, progress=False)
    return judge, report


def test_a_calibration_issues_a_certificate_bound_to_the_fingerprint(
    tmp_path: Path, store: Store
) -> None:
    judge, report = _calibrated(tmp_path, store, kappa=0.5)
    cal = report.scorers[0]
    cert = cal.certificate
    assert cert is not None and cert.passed
    assert cert.fingerprint == judge.fingerprint
    assert cert.judge_model == "scripted/openai/gpt-4o-mini"
    assert cert.n == 40 and cert.run_id == cal.run_id and cert.kind == "binary"
    assert cert.statistics["kappa"] == cal.statistics["kappa"]
    assert cert.gates[0]["statistic"] == "kappa" and cert.gates[0]["passed"]
    assert cert.data_key.startswith("sha256:") and cert.data_key.endswith("(b.jsonl)")
    # stored: read back whole
    assert store.certificates.get(cert.id[:8]) == cert
    found = certificate_for(judge, store=store)
    assert found == cert
    status = calibration_status(judge, store=store)
    assert status.state == "yes" and status.calibrated
    assert status.describe().startswith("calibrated: yes (κ 0.90 [")
    assert "n=40" in status.describe()


def test_a_changed_prompt_makes_the_certificate_stale(tmp_path: Path, store: Store) -> None:
    _calibrated(tmp_path, store)
    changed = judge_scorer(float, instructions="Grade leniently.", model="openai/gpt-4o-mini")
    assert certificate_for(changed, store=store) is None
    status = calibration_status(changed, store=store)
    assert status.state == "stale" and not status.calibrated
    assert status.reason is not None and status.reason.startswith("prompt changed")
    assert status.describe().startswith("calibrated: stale (prompt changed")


def test_a_changed_judge_model_makes_the_certificate_stale(tmp_path: Path, store: Store) -> None:
    _calibrated(tmp_path, store)
    other = judge_scorer(float, instructions="Grade strictly.", model="openai/gpt-4o")
    status = calibration_status(other, store=store)
    assert status.state == "stale"
    assert status.reason == (
        "judge model changed: scripted/openai/gpt-4o-mini → scripted/openai/gpt-4o"
    )


def test_a_scorer_never_calibrated_is_not(store: Store) -> None:
    status = calibration_status(create_scorer("content-similarity"), store=store)
    assert status.state == "no" and status.describe() == "calibrated: no"


def test_a_certificate_whose_gates_failed_does_not_count(tmp_path: Path, store: Store) -> None:
    judge, report = _calibrated(tmp_path, store, kappa=0.99)
    assert not report.passed
    status = calibration_status(judge, store=store)
    assert status.state == "failed" and not status.calibrated
    assert status.describe().startswith("calibrated: no, gates failed (κ")
    with pytest.raises(CalibrationRequiredError, match="gates failed"):
        require_calibrated([judge], store=store)


def test_a_run_that_requires_calibration_stops_before_any_item(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", f"sqlite:///{tmp_path / 'cert.db'}")
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows(4))
    config = RunConfig.model_validate(
        {"data": str(data), "scorers": ["content-similarity"], "require_calibrated": True}
    )
    with pytest.raises(CalibrationRequiredError, match="'content-similarity': calibrated: no"):
        run_sync(lambda: run_config_async(config, progress=False))
    assert store.runs.list() == []  # nothing ran, nothing stored


def test_a_calibrated_code_scorer_passes_the_requirement(tmp_path: Path, store: Store) -> None:
    rows = [
        {"id": f"s{k}", "input": "the cat sat", "output": out, "metadata": {"sim": sim}}
        for k, (out, sim) in enumerate(
            [("the cat sat", 5), ("the cat", 3.5), ("a dog ran", 0.5), ("cat sat", 4), ("x", 0)]
        )
    ]
    data = write_jsonl(tmp_path / "s.jsonl", rows)
    scorer = {"type": "content-similarity", "params": {"compare_to": "input"}}
    calibrate(
        {
            "data": str(data),
            "scorer": scorer,
            "label": "sim",
            "label_range": [0, 5],
            "kind": "numeric",
            "resamples": 100,
            "min": {"spearman": 0.1},
        },
        store=store,
        progress=False,
    )
    require_calibrated([scorer], store=store)  # no error
    run = run_stored(str(data), None, [scorer], store=store, progress=False)
    [spec] = store.runs.get(run.id).info.scorers
    assert spec_calibration_status(spec, store=store).state == "yes"
    [report] = write_run_reports(run, report=tmp_path / "r.html", stored=True, store=store)
    assert "content-similarity: calibrated: yes (ρ " in report.read_text()
    other = scorer_spec(create_scorer("content-similarity", compare_to="ground_truth"))
    assert spec_calibration_status(other, store=store).state == "stale"
    with pytest.raises(CalibrationRequiredError):
        require_calibrated(["content-similarity"], store=store)


def test_a_certificate_without_gates_is_no_gates_and_a_run_refuses_it(
    tmp_path: Path, store: Store
) -> None:
    judge, report = _calibrated(tmp_path, store)
    cert = report.scorers[0].certificate
    assert cert is not None and cert.gates == [] and not cert.passed
    status = calibration_status(judge, store=store)
    assert status.state == "no gates" and not status.calibrated
    assert status.describe().startswith("calibrated: no gates (")
    with pytest.raises(CalibrationRequiredError, match="no gates"):
        require_calibrated([judge], store=store)


def test_a_required_statistic_that_is_undefined_stores_a_failed_certificate(
    tmp_path: Path, store: Store
) -> None:
    rows = binary_rows()
    for row in rows:
        row["metadata"]["human"] = "yes"  # one class: ROC-AUC is undefined
    data = write_jsonl(tmp_path / "one.jsonl", rows)
    judge = judge_scorer(float, model="openai/gpt-4o-mini")
    report = calibrate(
        binary_config(data, require=["roc_auc"]), scorers=[judge], store=store, progress=False
    )
    cal = report.scorers[0]
    assert not report.passed and cal.statistics["roc_auc"]["value"] is None
    assert cal.gates[0].on == "defined" and "roc_auc is required but has no CI" in (
        cal.gates[0].reason
    )
    assert cal.certificate is not None and not cal.certificate.passed
    assert store.certificates.get(cal.certificate.id).passed is False
    assert calibration_status(judge, store=store).state == "failed"
    with pytest.raises(CalibrationRequiredError, match="gates failed"):
        require_calibrated([judge], store=store)


def test_an_unknown_required_statistic_is_refused_before_any_judge_call(
    tmp_path: Path, store: Store
) -> None:
    from assay.calibration.config import CalibrationConfigError

    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    calls: list[str] = []

    def answer(text: str) -> float:
        calls.append(text)
        return float(text)

    for key, value in (("require", ["rho_typo"]), ("min", {"kapa": 0.5})):
        with pytest.raises(CalibrationConfigError, match="no statistic"):
            calibrate(
                binary_config(data, **{key: value}),
                scorers=[judge_scorer(answer)],
                store=store,
                progress=False,
            )
    assert calls == [] and store.runs.list() == []


def test_stale_reasons_name_the_param_and_the_data_that_changed(
    tmp_path: Path, store: Store
) -> None:
    data = write_jsonl(tmp_path / "b.jsonl", binary_rows())
    base = judge_scorer(float, model="openai/gpt-4o-mini")
    judge = base.with_options(params={"temperature": 0.0, "scale": 5})
    report = calibrate(
        binary_config(data, min={"kappa": 0.5}), scorers=[judge], store=store, progress=False
    )
    assert report.passed
    warmer = judge.with_options(params={"temperature": 0.7, "scale": 5})
    assert calibration_status(warmer, store=store).reason == "params changed: temperature"
    by_param = judge.with_options(params={"temperature": 0.0, "scale": 5, "model": "x"})
    reason = calibration_status(by_param, store=store).reason
    assert reason is not None and reason.startswith("judge model source changed")
    elsewhere = calibration_status(judge, store=store, data_key="sha256:other (c.jsonl)")
    assert elsewhere.state == "stale"
    assert elsewhere.reason == f"data changed: certified on {report.data_key}"


def _says_yes(body: dict[str, Any]) -> dict[str, Any]:
    """The rubric judge behind the mock endpoint: its one criterion is met when the graded
    output says yes."""
    text = body["messages"][-1]["content"]
    graded = text.split("<<<DATA output to grade>>>", 1)[1].split("<<<END DATA>>>", 1)[0]
    return {
        "criteria": [
            {
                "criterion": "Says yes",
                "satisfied": "yes" in graded,
                "required": True,
                "reasoning": "read it",
            }
        ],
        "overallAssessment": "done",
    }


def test_a_judge_model_from_the_environment_is_the_certified_fingerprint(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: the judge model set by ``ASSAY_JUDGE_MODEL`` (the real resolution path, a
    real endpoint on loopback) certifies the fingerprint a scorer built from the same
    environment has; the same model given as the ``model`` param is a different
    configuration, and the reason says it is the model's source that changed."""
    rows = [
        {
            "id": f"i{k:02d}",
            "input": f"q{k}",
            "output": "yes" if k % 2 else "no",
            "metadata": {"human": "yes" if k % 2 else "no"},
        }
        for k in range(20)
    ]
    data = write_jsonl(tmp_path / "r.jsonl", rows)
    with MockOpenAIServer(responder=_says_yes) as server:
        monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai-compatible/env-judge")
        monkeypatch.setenv("ASSAY_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("ASSAY_CACHE", "off")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        judge = create_scorer("rubric", criteria="- Says yes")
        report = calibrate(
            binary_config(data, min={"kappa": 0.5}), scorers=[judge], store=store, progress=False
        )
        assert len(server.chat_requests) == 20
        assert {r.body["model"] for r in server.chat_requests} == {"env-judge"}  # type: ignore[index]
    [cal] = report.scorers
    assert report.passed and cal.certificate is not None
    assert cal.certificate.judge_model == "openai-compatible/env-judge"

    again = create_scorer("rubric", criteria="- Says yes")  # built anew from the environment
    assert again.fingerprint == cal.certificate.fingerprint
    assert calibration_status(again, store=store).state == "yes"
    config = {"type": "rubric", "params": {"criteria": "- Says yes"}}
    assert calibration_status(config, store=store).state == "yes"

    by_param = create_scorer("rubric", criteria="- Says yes", model="openai-compatible/env-judge")
    status = calibration_status(by_param, store=store)
    assert status.state == "stale"
    assert status.reason is not None and status.reason.startswith(
        "judge model source changed: openai-compatible/env-judge given by "
        "ASSAY_JUDGE_MODEL when certified, as the model param now"
    )
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai-compatible/other-judge")
    moved = calibration_status(config, store=store)
    assert moved.state == "stale" and moved.reason == (
        "judge model changed: openai-compatible/env-judge → openai-compatible/other-judge"
    )


def test_a_run_shows_its_judges_and_its_ever_calibrated_scorers_only(
    tmp_path: Path, store: Store
) -> None:
    """Summary and report lines: a judge never calibrated says "no" (news for a judge), a
    code scorer never calibrated says nothing, a calibrated one says what it has."""
    judge, _ = _calibrated(tmp_path, store, kappa=0.5)
    fresh_judge = judge_scorer(float, instructions="Grade kindly.", model="openai/gpt-4o-mini")
    code = create_scorer("exact-match")
    specs = [scorer_spec(judge), scorer_spec(fresh_judge), scorer_spec(code)]
    shown = shown_calibration_statuses(specs, store=store)
    assert [(spec.id, status.state) for spec, status in shown] == [
        (specs[0].id, "yes"),
        (specs[1].id, "stale"),
    ]
    assert shown_calibration_statuses([scorer_spec(code)], store=store) == []
