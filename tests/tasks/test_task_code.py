"""Task code written for lm-eval, run unchanged (issue 28): a ``utils.py`` importing
``lm_eval``, a custom ``aggregation: !function``, an empty document in a perplexity task.

The cases in ``lmeval_task_code_cases.json`` were produced by lm-eval 0.4.13's own
``ConfigurableTask`` (``make_task_code_cases.py``) from real catalogue tasks copied to
``task_code/``; assay must give the same filtered outputs, per-doc values and aggregates,
with the real lm-eval importable (this process, when installed) and without it (assay's
stand-ins, in a subprocess).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from assay.operations.tasks import load_task, run_task
from tests.tasks.lmeval_blocked import run_without_lmeval

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lmeval"
CASES: list[dict[str, Any]] = json.loads(
    (FIXTURES / "lmeval_task_code_cases.json").read_text(encoding="utf-8")
)["cases"]


def close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return bool(a == b)


def replay(case: dict[str, Any]) -> dict[str, Any]:
    task = load_task(FIXTURES / "task_code" / case["path"], docs=case["docs"])
    outcome = run_task(
        task, predictions=dict(enumerate(case["responses"])), stored=False, progress=False
    )
    return outcome.report


def assert_same_as_lmeval(report: dict[str, Any], case: dict[str, Any]) -> None:
    assert report["errors"] == []
    got = {(r["doc"], r["filter"]): r for r in report["per_doc"]}
    want = {(r["doc"], r["filter"]): r for r in case["per_doc"]}
    assert got.keys() == want.keys()
    for key, row in want.items():
        assert close(got[key]["filtered"], row["filtered"]), (key, got[key], row)
        assert close(got[key]["metrics"], row["metrics"]), (key, got[key], row)
    for key, value in case["aggregate"].items():
        assert close(report["aggregate"][key], value), (key, report["aggregate"][key], value)


@pytest.mark.parametrize("case", CASES, ids=[c["path"].split("/")[0] for c in CASES])
def test_reproduces_lmeval_in_this_environment(case: dict[str, Any]) -> None:
    assert_same_as_lmeval(replay(case), case)


def test_reproduces_lmeval_without_lmeval_importable() -> None:
    reports = run_without_lmeval(
        """
        import json, sys
        from tests.tasks.test_task_code import CASES, replay
        reports = [replay(case) for case in CASES]
        shim = getattr(sys.modules.get("lm_eval"), "__assay_lmeval_shim__", False)
        print(json.dumps({"shim": shim, "reports": reports}, default=repr))
        """
    )
    assert reports["shim"] is True  # the stand-ins answered, not a real lm-eval
    for case, report in zip(CASES, reports["reports"], strict=True):
        assert_same_as_lmeval(report, case)


def test_a_custom_aggregation_changes_the_aggregate_with_its_code(tmp_path: Path) -> None:
    case = next(c for c in CASES if c["path"].startswith("afrixnli"))
    root = tmp_path / "afrixnli"
    source = FIXTURES / "task_code" / "afrixnli" / "direct" / "prompt_1"
    root.mkdir()
    for name in ("afrixnli_eng.yaml", "afrixnli_yaml"):
        (root / name).write_text((source / name).read_text())
    (root / "utils.py").write_text(
        (source / "utils.py").read_text()
        + "\n\ndef weighted_f1_score(items):\n    return 0.125 * len(items)\n"
    )
    task = load_task(root / "afrixnli_eng.yaml", docs=case["docs"])
    report = run_task(
        task, predictions=dict(enumerate(case["responses"])), stored=False, progress=False
    ).report
    assert report["aggregate"]["f1,none"] == pytest.approx(0.625)
    assert report["aggregate"]["acc,none"] == pytest.approx(case["aggregate"]["acc,none"])
