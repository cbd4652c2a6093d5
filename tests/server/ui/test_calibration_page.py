"""The calibration page (``/calibrations/{id}``): a real calibration stored in a temp
SQLite store, rendered with its certificate and inline SVG plots, user text escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi.testclient import TestClient

from assay.calibration.run import calibrate
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


def test_an_unknown_certificate_is_a_404_naming_it(client: TestClient) -> None:
    page = client.get("/calibrations/nope")
    assert page.status_code == 404 and "nope" in page.text
