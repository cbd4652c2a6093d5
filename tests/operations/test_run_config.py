"""Run configs from a file plus separately given fields (CLI flags, API requests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.run_config import RunConfigError, run_config_from


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_fields_override_the_file(tmp_path: Path) -> None:
    path = _config(tmp_path, "data: d.jsonl\nscorers: [exact-match]\nconcurrency: 2\n")
    config = run_config_from(path, concurrency=5, repeats=None)
    assert config.concurrency == 5 and config.repeats == 1  # None: not given
    assert config.data == str(tmp_path / "d.jsonl")  # relative to the file


def test_a_source_field_replaces_the_files_source_of_the_other_kind(tmp_path: Path) -> None:
    path = _config(tmp_path, "dataset: qa\nversion: 2\nscorers: [exact-match]\n")
    with pytest.raises(RunConfigError, match="'version' needs 'dataset'"):
        run_config_from(path, data="other.jsonl")  # the file's version goes with its dataset
    path = _config(tmp_path, "data: d.jsonl\nscorers: [exact-match]\n")
    config = run_config_from(path, dataset="qa")
    assert (config.dataset, config.data) == ("qa", None)


def test_fields_alone_make_a_config_and_errors_name_the_flag() -> None:
    config = run_config_from(None, data="d.jsonl", scorers=["tone"], store=False)
    assert config.scorers == ["tone"] and config.store is False
    with pytest.raises(RunConfigError, match="no scorer given"):
        run_config_from(None, data="d.jsonl")
