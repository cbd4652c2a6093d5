"""Judge-corrected (prediction-powered) means of a stored run with a few human labels."""

from __future__ import annotations

from html import escape as html_escape
from pathlib import Path

import numpy as np
import pytest

from assay.calibration.config import make_calibration_config
from assay.calibration.judge_corrected import judge_corrected_for_config, judge_corrected_means
from assay.operations.stored_runs import run_stored
from assay.scoring.scorer import Scorer
from assay.store import open_store


def test_the_corrected_mean_removes_the_judge_bias_the_plain_mean_keeps(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    truth = rng.uniform(0.0, 0.8, 400)
    items = []
    for k, value in enumerate(truth):
        meta = {"judge": float(min(1.0, value + 0.2))}  # the judge is 0.2 too generous
        if k % 8 == 0:  # one item in eight carries a human label
            meta["human_label"] = float(value)
        items.append({"id": f"i{k}", "input": "q", "output": "a", "metadata": meta})
    generous = Scorer("generous").score(lambda ctx: ctx.call.metadata["judge"])
    with open_store(f"sqlite:///{tmp_path / 'ppi.db'}") as store:
        run = run_stored(items, None, [generous], store=store, progress=False)
        result = judge_corrected_means(run.id, store=store)["generous"]
    assert result["n"] == 400 and result["n_labelled"] == 50
    assert result["judge_mean"] == pytest.approx(truth.mean() + 0.2, abs=1e-9)
    assert result["ci_low"] <= truth.mean() <= result["ci_high"]
    assert abs(result["value"] - truth.mean()) < 0.02


def test_too_few_labels_give_a_reason_not_a_number(tmp_path: Path) -> None:
    items = [{"id": f"i{k}", "input": "q", "output": "a", "metadata": {}} for k in range(5)]
    items[0]["metadata"]["human_label"] = 1.0
    scorer = Scorer("constant").score(lambda ctx: 0.5)
    with open_store(f"sqlite:///{tmp_path / 'ppi.db'}") as store:
        run = run_stored(items, None, [scorer], store=store, progress=False)
        result = judge_corrected_means(run.id, store=store)["constant"]
    assert result["value"] is None and "PPI needs at least" in result["reason"]
    assert result["judge_mean"] == 0.5 and result["n_labelled"] == 1


def test_the_run_report_shows_the_corrected_mean_beside_the_plain_one(tmp_path: Path) -> None:
    from assay.operations.reports import write_run_reports

    items = [
        {"id": f"i{k}", "input": "q", "output": "a", "metadata": {"j": k % 2 * 1.0}}
        for k in range(20)
    ]
    for k in range(0, 20, 4):
        items[k]["metadata"]["human_label"] = 0.0
    scorer = Scorer("coin").score(lambda ctx: ctx.call.metadata["j"])
    with open_store(f"sqlite:///{tmp_path / 'ppi.db'}") as store:
        run = run_stored(items, None, [scorer], store=store, progress=False)
        [path] = write_run_reports(run, report=tmp_path / "r.html", stored=True, store=store)
        expected = judge_corrected_means(run.id, store=store)["coin"]
    html = path.read_text()
    assert 'id="judge-corrected"' in html
    assert f"{expected['value']:.3f}" in html and "0.500" in html  # corrected, plain mean
    # the judge is right on every labelled item: the rectifier's variance was floored, and
    # the report says so beside the weight λ the judge kept
    assert expected["warning"]
    row = html.split('class="judge-corrected"')[1].split("</table>")[0]
    assert '<th class="num">λ</th>' in row
    assert f'<td class="num">{expected["weight"]:.2f}</td>' in row
    assert html_escape(expected["warning"]) in row


def test_a_certificate_corrects_only_the_scorer_it_vouches_for(tmp_path: Path) -> None:
    """On another run the certificate's scorer is found by fingerprint: a run of another
    scorer is refused with the scorers it has; an unknown run id is a lookup error."""
    from assay.calibration.judge_corrected import certificate_judge_corrected
    from assay.calibration.run import calibrate
    from assay.store import StoreError

    example = Path(__file__).parents[2] / "examples" / "calibration" / "stsb.yaml"
    other = Scorer("other-scorer").score(lambda ctx: 0.5)
    with open_store(f"sqlite:///{tmp_path / 'cert.db'}") as store:
        report = calibrate(example, store=store, progress=False, resamples=100)
        cert = report.scorers[0].certificate
        assert cert is not None
        own = certificate_judge_corrected(cert.id[:8], store=store)
        assert own["run_id"] == cert.run_id and own["n_labelled"] == own["n"] == 80
        items = [{"id": "a", "input": "x", "output": "y"}]
        run = run_stored(items, None, [other], store=store, progress=False)
        with pytest.raises(LookupError, match="no scorer with this certificate's fingerprint"):
            certificate_judge_corrected(cert.id, run_id=run.id, store=store)
        with pytest.raises((LookupError, StoreError)):
            certificate_judge_corrected(cert.id, run_id="no-such-run", store=store)


def test_a_calibration_config_reads_the_labels_its_own_way(tmp_path: Path) -> None:
    """``--ppi RUN``: the run's labels read with the config's label, label_map and
    label_range (text grades on a 0..4 scale here, mapped onto the scorer's 0..1)."""
    grades = ["bad", "poor", "fair", "good", "great"]
    items = [
        {"id": f"i{k}", "input": "q", "output": "a", "metadata": {"grade": grades[k % 5]}}
        for k in range(40)
    ]
    scorer = Scorer("half").score(lambda ctx: 0.5)
    config = make_calibration_config(
        {
            "scorer": "half",
            "data": "unused.jsonl",
            "kind": "numeric",
            "label": "grade",
            "label_map": {g: float(v) for v, g in enumerate(grades)},
            "label_range": [0, 4],
        }
    )
    with open_store(f"sqlite:///{tmp_path / 'ppi.db'}") as store:
        run = run_stored(items, None, [scorer], store=store, progress=False)
        result = judge_corrected_for_config(config, run.id, store=store)["half"]
        with pytest.raises(
            ValueError, match="pass label_map"
        ):  # the config's map is what reads them
            judge_corrected_means(run.id, label="metadata.grade", store=store)
    assert result["n_labelled"] == 40 and result["value"] == pytest.approx(0.5)
    assert result["ci_low"] < 0.5 < result["ci_high"]
