"""``calibration.view``: a certificate's plot data, rebuilt from its stored run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.calibration.run import calibrate
from assay.calibration.view import calibration_view
from assay.scoring.scorer import Scorer
from assay.store import Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "view.db")) as db:
        yield db


def _calibrated(
    store: Store, tmp_path: Path, rows: list[tuple[float, float]], **cfg: object
) -> str:
    data = tmp_path / "d.jsonl"
    lines = [
        {"id": f"i{k}", "input": "q", "output": str(score), "metadata": {"human": label}}
        for k, (score, label) in enumerate(rows)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    scorer = Scorer("echo").score(lambda ctx: float(ctx.output_text))
    config = {"data": str(data), "label": "human", "resamples": 200, **cfg}
    report = calibrate(config, scorers=[scorer], store=store, progress=False)
    certificate = report.scorers[0].certificate
    assert certificate is not None
    return certificate.id


def test_numeric_labels_are_put_on_the_scorer_scale(store: Store, tmp_path: Path) -> None:
    rows = [(0.1, 0.0), (0.5, 2.0), (0.9, 4.0), (0.3, 4.0), (0.95, 3.0)]
    cert = _calibrated(store, tmp_path, rows, kind="numeric", label_range=[0, 4])
    view = calibration_view(cert[:8], store=store)
    assert view.note is None and view.confusion is None and view.score_range == (0.0, 1.0)
    assert [(p.score, p.label) for p in view.points] == [
        (0.1, 0.0),
        (0.5, 0.5),
        (0.9, 1.0),
        (0.3, 1.0),
        (0.95, 0.75),
    ]
    # ten bins over 0..1, edges included below: 0.3 in [0.3, 0.4), 0.9 with 0.95
    assert [(b.n, b.mean_label) for b in view.reliability] == [
        (1, 0.0),
        (1, 1.0),
        (1, 0.5),
        (2, pytest.approx(0.875)),
    ]
    assert [(round(b.low, 9), b.n) for b in view.reliability] == [
        (0.1, 1),
        (0.3, 1),
        (0.5, 1),
        (0.9, 2),
    ]
    assert [p.item_id for p in view.disagreements][:2] == ["i3", "i4"]  # gaps 0.7, 0.2


def test_binary_confusion_counts_verdicts_at_the_threshold(store: Store, tmp_path: Path) -> None:
    rows = [(0.9, "yes"), (0.8, "no"), (0.2, "no"), (0.4, "yes"), (0.1, "no")]
    cert = _calibrated(
        store, tmp_path, rows, kind="binary", threshold=0.5, label_map={"yes": 1, "no": 0}
    )
    view = calibration_view(cert, store=store)
    assert view.confusion == {"labels": [0, 1], "matrix": [[2, 1], [1, 1]]}
    assert {p.item_id for p in view.disagreements} == {"i1", "i3"}
