"""``assay.tasks.coverage``: counting a task tree, with broken and hostile files in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.tasks.coverage import measure_catalogue, reason_class
from assay.tasks.errors import TaskConfigError

GOOD = "task: good\ndataset_path: x\ndoc_to_text: q\ndoc_to_target: a\n"


def write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def test_counts_tasks_skips_templates_and_multimodal_and_explains_failures(tmp_path: Path) -> None:
    write(tmp_path, "a/good.yaml", GOOD)
    write(tmp_path, "a/_template_yaml", "dataset_path: x\n")  # not a .yaml: not walked
    write(tmp_path, "a/template.yaml", "dataset_path: x\ndoc_to_text: q\n")  # no task: skipped
    write(tmp_path, "b/image.yaml", GOOD.replace("good", "image") + "doc_to_image: img\n")
    write(tmp_path, "b/syntax.yaml", "task: [unclosed\n")
    write(tmp_path, "b/binary.yaml", b"\xff\xfe\x00task: x")
    needs = GOOD.replace("good", "needs") + "process_docs: !function u.f\n"
    write(tmp_path, "c/needs.yaml", needs)
    write(tmp_path, "c/u.py", "import not_a_module_anywhere\ndef f(d):\n    return d\n")
    write(
        tmp_path, "c/raises.yaml", GOOD.replace("good", "raises") + "process_docs: !function r.f\n"
    )
    write(tmp_path, "c/r.py", "raise SystemError('boom at 0x7f00deadbeef')\n")
    exits = GOOD.replace("good", "exits") + "process_docs: !function e.f\n"
    write(tmp_path, "c/exits.yaml", exits)
    write(tmp_path, "c/e.py", "import sys\nprint('no swipl')\nsys.exit(3)\n")  # as catalogue code
    write(tmp_path, "__pycache__/x.yaml", "task: [\n")  # caches are not walked

    coverage = measure_catalogue(tmp_path)

    assert (coverage.total, coverage.valid, coverage.multimodal) == (6, 1, 1)
    assert coverage.share == pytest.approx(1 / 6)
    reasons = {f.path: f.reason for f in coverage.failures}
    assert set(reasons) == {
        "b/syntax.yaml",
        "b/binary.yaml",
        "c/needs.yaml",
        "c/raises.yaml",
        "c/exits.yaml",
    }
    assert "SystemExit: 3" in reasons["c/exits.yaml"]
    assert all("\n" not in r and str(tmp_path) not in r for r in reasons.values())
    assert reason_class(reasons["c/needs.yaml"]) == "missing module not_a_module_anywhere"
    assert "0x7f00deadbeef" not in reasons["c/raises.yaml"]
    assert "SystemError: boom" in reasons["c/raises.yaml"]


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskConfigError, match="not a directory"):
        measure_catalogue(tmp_path / "nope")
