"""A judge optimization's page: agreement with the labels seed → winner on val and test,
gates, the certificate link, and the test confusion matrix before and after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from assay.optimize.judge import optimize_judge
from assay.server.ui.judge_optimization import judge_view
from assay.store import Store
from assay.testing import ScriptedModel
from tests.optimize.judge_mock import judge_reply, labelled_rows, reflection_reply, write_rows


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "scorer": {"type": "toxicity", "params": {"reason": "template"}},
        "data": write_rows(tmp_path / "labelled.jsonl", labelled_rows()),
        "label": "label",
        "label_map": {"toxic": 1, "ok": 0},
        "kind": "binary",
        "split": {"seed": 3},
        "budget": {"max_metric_calls": 300},
        "minibatch_size": 10,
        "reflection_model": "scripted/reflect",
        "resamples": 200,
        "run_dir": str(tmp_path / "gepa"),
    }


def test_the_page_shows_agreement_gates_certificate_and_confusion_before_after(
    client: TestClient, store: Store, tmp_path: Path
) -> None:
    result = optimize_judge(
        _config(tmp_path),
        judge_model=ScriptedModel(responder=judge_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
        min={"kappa": 0.6},
    )
    page = client.get(f"/optimizations/{result.optimization_id}").text
    assert 'data-testid="judge-agreement"' in page
    assert "<td>kappa</td>" in page
    assert f'href="/calibrations/{result.certificate_id}"' in page
    assert "gate passed: kappa lower 95% CI bound" in page
    before = page[page.index('data-testid="confusion-before"') :]
    after = page[page.index('data-testid="confusion-after"') :]
    assert "<svg" in before[:200] and "<svg" in after[:200]
    assert before[: before.index("</figure>")] != after[: after.index("</figure>")]
    assert client.get(f"/calibrations/{result.certificate_id}").status_code == 200


def test_a_task_optimization_or_a_damaged_result_shows_no_judge_section() -> None:
    assert judge_view(None) is None
    assert judge_view({"best_idx": 0, "summary": "a task optimization"}) is None
    damaged = judge_view(
        {
            "held_out": {"seed": "oops", "best": {"confusion_matrix": {"matrix": "x"}}},
            "val": 3,
            "difference": [],
            "gates": ["not a gate"],
            "objective": "kappa",
            "kind": "binary",
        }
    )
    assert damaged is not None
    assert damaged["confusion_seed"] is None and damaged["confusion_best"] is None
    assert damaged["gates"] == [] and damaged["rows"][0]["cells"] == ["—"] * 5
