"""Group entries as lm-eval writes them (issue 28): ``- task: NAME`` with overrides names a
task defined elsewhere; an inline entry may ``include:`` a template next to the group."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.tasks import group_leaves
from assay.tasks.config import GroupConfig, TaskConfig, TaskReference
from assay.tasks.errors import TaskConfigError
from assay.tasks.yaml_loader import load_task_config

BASE = "task: base\ndataset_path: x\noutput_type: generate_until\nnum_fewshot: 1\n"
BASE += "doc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"


def test_a_named_task_with_overrides(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(BASE)
    group = tmp_path / "group.yaml"
    group.write_text(
        "group: g\ntask:\n  - task: base\n    num_fewshot: 5\n    task_alias: five-shot\n"
    )
    config = load_task_config(group)
    assert isinstance(config, GroupConfig)
    child = config.task[0]
    assert isinstance(child, TaskReference)
    assert child.overrides == {"num_fewshot": 5, "task_alias": "five-shot"}
    assert config.task_names() == ["base"]
    _, leaves = group_leaves(group)
    assert leaves["base"].config.num_fewshot == 5
    assert leaves["base"].config.task_alias == "five-shot"


def test_a_misspelt_override_is_named(tmp_path: Path) -> None:
    group = tmp_path / "group.yaml"
    group.write_text("group: g\ntask:\n  - task: base\n    num_fewshots: 5\n")
    with pytest.raises(TaskConfigError, match="did you mean 'num_fewshot'"):
        load_task_config(group)


def test_an_inline_entry_includes_a_template_next_to_the_group(tmp_path: Path) -> None:
    (tmp_path / "_template_yaml").write_text(BASE.replace("task: base\n", ""))
    group = tmp_path / "group.yaml"
    group.write_text(
        "group: g\ntask:\n  - group: inner\n    task:\n"
        "      - task: p0\n        include: _template_yaml\n        doc_to_text: 'Q: {{q}}'\n"
    )
    config = load_task_config(group)
    assert isinstance(config, GroupConfig)
    inner = config.task[0]
    assert isinstance(inner, GroupConfig)
    leaf = inner.task[0]
    assert isinstance(leaf, TaskConfig)
    assert (leaf.task, leaf.doc_to_text, leaf.dataset_path) == ("p0", "Q: {{q}}", "x")


def test_an_inline_include_that_is_missing_is_an_error(tmp_path: Path) -> None:
    group = tmp_path / "group.yaml"
    group.write_text("group: g\ntask:\n  - task: p0\n    include: nope_yaml\n")
    with pytest.raises(TaskConfigError, match="included file not found"):
        load_task_config(group)
