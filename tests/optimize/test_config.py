"""YAML optimization configs: relative paths, shorthand splits, errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assay.optimize import OptimizeConfigError, load_optimize_config


def _write(tmp_path: Path, **config: object) -> Path:
    path = tmp_path / "conf" / "optimize.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


BASE = {
    "candidate": {"system": "Be brief."},
    "train": "data/train.jsonl",
    "scorers": ["exact-match"],
    "budget": {"max_metric_calls": 10},
    "task_model": "openai/gpt-4o-mini",
    "reflection_model": "openai/gpt-4o",
}


def test_relative_data_paths_are_relative_to_the_config(tmp_path: Path) -> None:
    config = load_optimize_config(
        _write(tmp_path, **BASE, test={"dataset": "held-out", "version": 2})
    )
    assert config.train.data == str(tmp_path / "conf" / "data" / "train.jsonl")
    assert config.test is not None and (config.test.dataset, config.test.version) == (
        "held-out",
        2,
    )
    assert (config.candidate_selection, config.minibatch_size, config.concurrency) == (
        "pareto",
        3,
        16,
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"candidate": {}}, "key 'candidate': .*at least 1"),
        ({"candidate_selection": "best"}, "key 'candidate_selection'"),
        ({"train": {"data": "a", "dataset": "b"}}, "key 'train': .*exactly one"),
        ({"val": {"file": "a"}}, "unknown key 'val.file'"),
        ({"minibatch_size": 0}, "key 'minibatch_size'"),
        ({"budget": {"max_cost_usd": -1}}, "key 'budget.max_cost_usd'"),
        ({"task_model": None}, "key 'task_model'"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, change: dict[str, object], message: str) -> None:
    with pytest.raises(OptimizeConfigError, match=message):
        load_optimize_config(_write(tmp_path, **{**BASE, **change}))


def test_unreadable_and_non_mapping_files(tmp_path: Path) -> None:
    with pytest.raises(OptimizeConfigError, match="cannot read"):
        load_optimize_config(tmp_path / "missing.yaml")
    path = tmp_path / "list.yaml"
    path.write_text("- a\n", encoding="utf-8")
    with pytest.raises(OptimizeConfigError, match="expected a mapping"):
        load_optimize_config(path)
