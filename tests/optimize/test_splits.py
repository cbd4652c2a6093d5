"""Where a split's data comes from is pinned when the optimization starts (issue 20: a
resume from another folder read other files, silently): files become absolute paths with
their SHA-256, and a file that changed since is refused at resume."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assay.optimize import load_optimize_config
from assay.optimize.splits import file_sha256, load_splits, pin_versions
from assay.store import Store
from tests.optimize.conftest import arithmetic_rows, write_jsonl


def _config_in(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    write_jsonl(folder / "data" / "train.jsonl", arithmetic_rows(8))
    path = folder / "optimize.yaml"
    config = {
        "candidate": {"system": "Be brief."},
        "train": "data/train.jsonl",
        "scorers": ["exact-match"],
        "budget": {"max_metric_calls": 10},
        "task_model": "openai/gpt-4o-mini",
        "reflection_model": "openai/gpt-4o",
        "run_dir": "gepa",
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_files_are_pinned_by_absolute_path_and_content_hash(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config_in(tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")  # the config given relative to the cwd
    pinned = pin_versions(load_optimize_config("optimize.yaml"), store)
    train = tmp_path / "project" / "data" / "train.jsonl"
    assert pinned.train.data == str(train.resolve())
    assert pinned.train.sha256 == file_sha256(train)
    assert pinned.run_dir == str((tmp_path / "project" / "gepa").resolve())

    monkeypatch.chdir(tmp_path)  # a resume from elsewhere reads the same file
    assert len(load_splits(pinned, store).train) > 0


def test_a_file_that_changed_since_the_start_is_refused(tmp_path: Path, store: Store) -> None:
    pinned = pin_versions(load_optimize_config(_config_in(tmp_path)), store)
    train = tmp_path / "data" / "train.jsonl"
    write_jsonl(train, arithmetic_rows(8, start=100))
    with pytest.raises(ValueError, match=r"^train: cannot read .*train\.jsonl: the file changed"):
        load_splits(pinned, store)


def test_a_stored_config_without_a_hash_still_reads(tmp_path: Path, store: Store) -> None:
    """Optimizations stored before hashes existed resume as they did."""
    config = load_optimize_config(_config_in(tmp_path))
    assert config.train.sha256 is None
    assert len(load_splits(config, store).train) > 0
