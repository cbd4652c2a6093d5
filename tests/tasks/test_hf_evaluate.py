"""``hf_evaluate: true`` metrics beyond the local ones: ``evaluate.load(name)`` with the
``hf-evaluate`` extra, the same numbers as calling evaluate directly; without the extra a
clear error. The metric is a local evaluate script (no network)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.operations.tasks import load_task, run_task

SCRIPT = """
import datasets
import evaluate


class ShareEqual(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="share of equal strings, plus an offset",
            citation="",
            inputs_description="",
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions, references, offset=0.0):
        same = sum(p == r for p, r in zip(predictions, references))
        return {"share_equal": same / len(predictions) + offset}
"""

# evaluate.load("share_equal") finds the script folder in the working directory (as under
# lm-eval); the tests run from tmp_path
DOCS = [{"q": "a?", "a": "x"}, {"q": "b?", "a": "y"}, {"q": "c?", "a": "z"}]


def task_yaml(tmp_path: Path) -> Path:
    metric = tmp_path / "share_equal"
    metric.mkdir()
    (metric / "share_equal.py").write_text(SCRIPT)
    path = tmp_path / "t.yaml"
    path.write_text(
        "task: t\ndataset_path: x\noutput_type: generate_until\n"
        "doc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"
        "metric_list:\n  - metric: share_equal\n    hf_evaluate: true\n"
        "    aggregation: mean\n    offset: 0.25\n"
    )
    return path


@pytest.mark.skipif(
    importlib.util.find_spec("evaluate") is None, reason="the hf-evaluate extra is not installed"
)
def test_an_evaluate_metric_gives_evaluates_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaluate

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    path = task_yaml(tmp_path)
    predictions = {0: "x", 1: "nope", 2: "z"}
    report = run_task(
        load_task(path, docs=DOCS), predictions=predictions, stored=False, progress=False
    ).report
    assert report["errors"] == []
    direct = evaluate.load("share_equal")
    want = [
        direct.compute(references=[doc["a"]], predictions=[predictions[i]], offset=0.25)
        for i, doc in enumerate(DOCS)
    ]
    got = [row["metrics"] for row in report["per_doc"]]
    assert got == want  # [{'share_equal': 1.25}, {'share_equal': 0.25}, {'share_equal': 1.25}]
    assert report["aggregate"]["share_equal,none"] == pytest.approx(2.75 / 3)


def test_without_the_extra_the_error_names_it(tmp_path: Path) -> None:
    path = task_yaml(tmp_path)
    code = f"""
    import json, sys
    class NoEvaluate:
        def find_spec(self, name, path=None, target=None):
            if name == "evaluate" or name.startswith("evaluate."):
                raise ModuleNotFoundError(name, name=name)
    sys.meta_path.insert(0, NoEvaluate())
    import importlib.util
    importlib.util.find_spec = lambda name, *a: None if name == "evaluate" else _find(name, *a)
    from assay.operations.tasks import load_task, run_task
    report = run_task(load_task({str(path)!r}, docs={DOCS!r}),
                      predictions={{0: "x", 1: "y", 2: "z"}}, stored=False, progress=False).report
    print(json.dumps(report["errors"]))
    """
    code = code.replace("_find(name, *a)", "_orig(name, *a)").replace(
        "import importlib.util\n", "import importlib.util\n    _orig = importlib.util.find_spec\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(errors) == 3
    assert all("pip install 'assay[hf-evaluate]'" in e["error"] for e in errors)
