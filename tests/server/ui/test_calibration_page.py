"""The calibration page (``/calibrations/{id}``): a real calibration stored in a temp
SQLite store, rendered with its certificate and inline SVG plots, user text escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from assay.calibration.run import calibrate
from assay.calibration.statistics import ppi_mean
from assay.operations.stored_runs import run_stored
from assay.scoring.registry import create_scorer
from assay.scoring.scorer import Scorer
from assay.store import Certificate, Store

EXAMPLE = Path(__file__).parents[3] / "examples" / "calibration" / "stsb.yaml"


def test_sts_b_calibration_page_shows_the_certificate_and_its_plots(
    client: TestClient, store: Store
) -> None:
    report = calibrate(EXAMPLE, store=store, progress=False, resamples=200)
    cert = report.scorers[0].certificate
    assert cert is not None

    listing = client.get("/calibrations").text
    assert f'href="/calibrations/{cert.id}"' in listing

    page = client.get(f"/calibrations/{cert.id[:10]}")
    assert page.status_code == 200
    html = page.text
    for shown in (cert.fingerprint, cert.data_key, cert.scorer_label, str(cert.run_id)):
        assert shown in html
    assert ">passed<" in html if cert.passed else ">failed<" in html
    assert "<td>spearman</td>" in html
    assert "spearman lower 95% CI bound" in html  # the gate, in words
    # numeric labels: reliability curve and scatter, no confusion matrix
    assert 'data-testid="scatter-plot"' in html and 'data-testid="reliability-plot"' in html
    assert 'data-testid="confusion-plot"' not in html
    scatter = html.split('data-testid="scatter-plot"')[1].split("</svg>")[0]
    assert scatter.count("<circle") == report.scorers[0].n == 80
    assert 'data-testid="disagreements"' in html
    # offline: nothing fetched from another host
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_binary_calibration_page_has_a_confusion_heatmap_and_escapes_item_ids(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    rows = [
        {"id": f"<b>item{k}</b>", "input": "q", "output": str(s), "metadata": {"human": h}}
        for k, (s, h) in enumerate([(0.9, "yes"), (0.8, "no"), (0.2, "no"), (0.1, "no")])
    ]
    data = tmp_path / "b.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scorer = Scorer("<i>verdict</i>").score(lambda ctx: float(ctx.output_text))
    config = {
        "data": str(data),
        "label": "human",
        "label_map": {"yes": 1, "no": 0},
        "kind": "binary",
        "threshold": 0.5,
        "resamples": 200,
    }
    report = calibrate(config, scorers=[scorer], store=store, progress=False)
    cert = report.scorers[0].certificate
    assert cert is not None

    html = client.get(f"/calibrations/{cert.id}").text
    heatmap = html.split('data-testid="confusion-plot"')[1].split("</svg>")[0]
    # rows: human 0, 1; columns: verdict 0, 1 -> [[2, 1], [0, 1]]
    counts = re.findall(r'fill="#[0-9a-f]+">(\d+)</text>', heatmap)
    assert counts == ["2", "1", "0", "1"]
    # the one disagreement (item1: score 0.8, humans no) is listed, its id escaped
    table = html.split('data-testid="disagreements"')[1].split("</table>")[0]
    assert "&lt;b&gt;item1&lt;/b&gt;" in table and "item0" not in table
    assert "<b>item" not in html and "<i>verdict</i>" not in html
    assert "&lt;i&gt;verdict&lt;/i&gt;" in html


def test_a_certificate_without_recorded_labels_says_why_there_are_no_plots(
    client: TestClient, store: Store
) -> None:
    cert = store.certificates.add(
        Certificate(
            fingerprint="f" * 64,
            fingerprint_parts={},
            scorer_type="x",
            scorer_label="old judge",
            data_key="k",
            kind="binary",
            n=3,
            statistics={},
            passed=True,
        )
    )
    html = client.get(f"/calibrations/{cert.id}").text
    assert 'data-testid="plot-note"' in html and "links no run" in html
    assert "<svg" not in html


def test_a_certificate_without_gates_says_no_gates_on_its_page_and_the_list(
    client: TestClient, store: Store
) -> None:
    """Issue 25: no gates certifies nothing; even a stored ``passed: true`` (as older
    certificates carry) reads "no gates", never a green "passed"."""
    for passed in (True, False):
        cert = store.certificates.add(
            Certificate(
                fingerprint=("a" if passed else "b") * 64,
                fingerprint_parts={},
                scorer_type="x",
                scorer_label="judge",
                data_key="k",
                kind="binary",
                n=3,
                statistics={},
                passed=passed,
            )
        )
        html = client.get(f"/calibrations/{cert.id}").text
        badge = re.search(r'<span class="status ([\w-]+)" data-testid="passed">([^<]*)<', html)
        assert badge and badge.groups() == ("status-none", "no gates"), html[:2000]
        assert "No gates were set." in html
    listing = client.get("/calibrations").text
    assert listing.count('data-testid="cert-state">no gates<') == 2
    assert ">passed<" not in listing


def test_an_unknown_certificate_is_a_404_naming_it(client: TestClient) -> None:
    page = client.get("/calibrations/nope")
    assert page.status_code == 404 and "nope" in page.text


def _ppi_section(html: str) -> str:
    return html.split("Judge-corrected mean (PPI++)</h2>")[1].split("<h2>")[0]


def test_calibration_page_shows_the_judge_corrected_mean_of_its_own_run(
    client: TestClient, store: Store
) -> None:
    """Every item of the calibration run is labelled, so the corrected mean is the human
    mean (on the scorer's scale) whatever λ, beside the judge's plain mean."""
    report = calibrate(EXAMPLE, store=store, progress=False, resamples=200)
    cert = report.scorers[0].certificate
    assert cert is not None and cert.run_id is not None
    section = _ppi_section(client.get(f"/calibrations/{cert.id}").text)
    labels = [
        json.loads(line)["metadata"]["similarity"] / 5.0
        for line in (EXAMPLE.parent / "stsb_sample.jsonl").read_text().splitlines()
    ]
    value = section.split('data-testid="ppi-value">')[1].split(" ")[0]
    assert float(value) == pytest.approx(sum(labels) / len(labels), abs=5e-4)
    assert "80 of 80 items" in section
    assert 'data-testid="ppi-plot"' in section and "judge-corrected" in section


def test_judge_corrected_mean_on_another_run_with_few_labels(
    client: TestClient, store: Store
) -> None:
    """A run of the certified scorer where 12 of 80 items carry a human label: the page
    reads them with the calibration's label field and label_range and shows the same
    PPI++ estimate as ``ppi_mean`` on those numbers; a bad run id is a message, escaped."""
    report = calibrate(EXAMPLE, store=store, progress=False, resamples=200)
    cert = report.scorers[0].certificate
    assert cert is not None
    rows = [
        json.loads(line) for line in (EXAMPLE.parent / "stsb_sample.jsonl").read_text().splitlines()
    ]
    for k, row in enumerate(rows):
        if k % 7:
            del row["metadata"]["similarity"]
    scorer = create_scorer({"type": "content-similarity", "params": {"compare_to": "input"}})
    run = run_stored(rows, None, [scorer], store=store, name="mostly unlabelled")
    scores = {r.item_id: r.scores[scorer.id].score for r in store.runs.results(run.id)}
    labelled = [row for row in rows if "similarity" in row["metadata"]]
    assert len(labelled) == 12
    expected = ppi_mean(
        np.array([scores[row["id"]] for row in rows]),
        np.array([scores[row["id"]] for row in labelled]),
        np.array([row["metadata"]["similarity"] / 5.0 for row in labelled]),
    )
    section = _ppi_section(client.get(f"/calibrations/{cert.id}?ppi_run={run.id}").text)
    assert f"/runs/{run.id}" in section and "12 of 80 items" in section
    shown = section.split('data-testid="ppi-value">')[1].split("</td>")[0]
    value, low, high = (float(t.strip("[],")) for t in shown.split())
    assert value == pytest.approx(expected.value, abs=5e-4)
    assert (low, high) == pytest.approx((expected.ci_low, expected.ci_high), abs=5e-4)
    assert f"{expected.weight:.2f}" in section.split('data-testid="ppi-weight">')[1][:12]

    hostile = client.get(f"/calibrations/{cert.id}", params={"ppi_run": "<script>x</script>"})
    assert hostile.status_code == 200
    error = hostile.text.split('data-testid="ppi-error">')[1].split("</p>")[0]
    assert "&lt;script&gt;" in error and "<script>x" not in hostile.text


def test_a_judge_right_on_every_labelled_item_shows_the_variance_warning(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    """No labelled item disagrees with the judge: the rectifier's variance is floored and
    the page says so (the interval would otherwise have width 0)."""
    rows = [
        {"id": f"i{k}", "input": "q", "output": str(k % 2), "metadata": {"human": k % 2}}
        for k in range(12)
    ]
    data = tmp_path / "exact.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scorer = Scorer("exact").score(lambda ctx: float(ctx.output_text))
    config = {"data": str(data), "label": "human", "kind": "binary", "resamples": 100}
    report = calibrate(config, scorers=[scorer], store=store, progress=False)
    cert = report.scorers[0].certificate
    assert cert is not None
    section = _ppi_section(client.get(f"/calibrations/{cert.id}").text)
    warning = section.split('data-testid="ppi-warning">')[1].split("</p>")[0]
    assert "floored" in warning
    value, low, high = (
        float(t.strip("[],"))
        for t in section.split('data-testid="ppi-value">')[1].split("</td>")[0].split()
    )
    assert value == pytest.approx(0.5) and low < value < high
