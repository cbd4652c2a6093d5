"""``${VAR}`` in YAML configs (run, calibration, optimization)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.calibration.config import (
    CalibrationConfigError,
    load_calibration_config,
)
from assay.config_file import MissingVariableError, substitute_env
from assay.operations.run_config import RunConfigError, load_run_config


def test_values_are_substituted_defaults_apply_and_escapes_stay() -> None:
    env = {"URL": "http://127.0.0.1:9/v1", "N": "3"}
    raw = {
        "target": {"base_url": "${URL}", "n": "${N}"},
        "scorers": ["${MISSING:-exact-match}", "$${URL}"],
        "keep": 5,
    }
    assert substitute_env(raw, env=env) == {
        "target": {"base_url": "http://127.0.0.1:9/v1", "n": "3"},
        "scorers": ["exact-match", "${URL}"],
        "keep": 5,
    }


def test_a_value_with_yaml_syntax_stays_one_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_T_NAME", "x\nstore: false\nscorers: []")
    path = tmp_path / "run.yaml"
    path.write_text("name: ${ASSAY_T_NAME}\ndata: d.jsonl\nscorers: [exact-match]\n")
    config = load_run_config(path)
    assert config.name == "x\nstore: false\nscorers: []" and config.store is True


def test_a_missing_variable_is_one_line_naming_it_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_T_UNSET", raising=False)
    path = tmp_path / "run.yaml"
    path.write_text("data: d.jsonl\nscorers:\n  - type: exact-match\n    id: ${ASSAY_T_UNSET}\n")
    with pytest.raises(RunConfigError) as caught:
        load_run_config(path)
    message = str(caught.value)
    assert "ASSAY_T_UNSET is not set" in message and "scorers[0].id" in message
    assert "\n" not in message
    with pytest.raises(MissingVariableError):
        substitute_env("${ASSAY_T_UNSET}", env={})
    cal = tmp_path / "cal.yaml"
    cal.write_text("scorer: exact-match\ndata: ${ASSAY_T_UNSET}\n")
    with pytest.raises(CalibrationConfigError, match="ASSAY_T_UNSET"):
        load_calibration_config(cal)
