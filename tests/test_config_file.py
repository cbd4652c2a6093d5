"""The one YAML config reader (``assay.config_file``): ``${VAR}``, the file errors and the
key errors, the same for the run, calibration, optimization and judge-optimization configs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.calibration.config import (
    CalibrationConfigError,
    load_calibration_config,
    make_calibration_config,
)
from assay.config_file import (
    ConfigError,
    MissingVariableError,
    merge_overrides,
    substitute_env,
)
from assay.operations.run_config import RunConfigError, load_run_config
from assay.optimize.config import OptimizeConfigError, load_optimize_config
from assay.optimize.judge_config import load_judge_optimize_config, make_judge_optimize_config

LOADERS: list[tuple[Callable[[Path], Any], type[ConfigError]]] = [
    (load_run_config, RunConfigError),
    (load_calibration_config, CalibrationConfigError),
    (load_optimize_config, OptimizeConfigError),
    (load_judge_optimize_config, OptimizeConfigError),
]

LABELLED = {"scorer": "toxicity", "data": "labels.jsonl", "kind": "binary"}
SEARCH = {"reflection_model": "scripted/reflect", "budget": {"max_metric_calls": 10}}


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


@pytest.mark.parametrize(("load", "error"), LOADERS)
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot read {path}: No such file or directory"),
        ("a: [1, 2\n", "{path}: invalid YAML: "),
        ("- a\n- b\n", "{path}: expected a mapping at the top level"),
        ("1\n", "{path}: expected a mapping at the top level"),
        # safe YAML: a Python tag is refused, never executed
        ("x: !!python/object/apply:os.system ['echo pwned']\n", "{path}: invalid YAML: "),
        ("name: ${ASSAY_T_UNSET_VAR}\n", "{path}: environment variable ASSAY_T_UNSET_VAR is"),
    ],
)
def test_every_config_reader_fails_alike_in_one_line_naming_the_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    load: Callable[[Path], Any],
    error: type[ConfigError],
    text: str | None,
    message: str,
) -> None:
    monkeypatch.delenv("ASSAY_T_UNSET_VAR", raising=False)
    path = tmp_path / "config.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(error) as caught:
        load(path)
    assert isinstance(caught.value, ConfigError)
    assert str(caught.value).startswith(message.format(path=path))
    assert "pwned" not in str(caught.value) or "invalid YAML" in str(caught.value)


def test_a_judge_optimization_config_substitutes_variables_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_T_JUDGE_MODEL", "scripted/from-env")
    path = tmp_path / "judge.yaml"
    path.write_text(
        "scorer: toxicity\ndata: labels.jsonl\nkind: binary\n"
        "reflection_model: ${ASSAY_T_JUDGE_MODEL}\nbudget: {max_metric_calls: 10}\n",
        encoding="utf-8",
    )
    config = load_judge_optimize_config(path)
    assert config.reflection_model == "scripted/from-env"
    assert config.data == str(tmp_path.resolve() / "labels.jsonl")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"treshold": 0.5}, "unknown key 'treshold'; did you mean 'threshold'?"),
        ({"label_range": [5, 0]}, "'label_range' must be [low, high] with finite low < high"),
        ({"data": None}, "give exactly one of 'data' (a file), 'dataset'"),
        ({"version": 2}, "'version' needs 'dataset'"),
        ({"kind": "scale"}, "key 'kind': 'scale' is not one of binary, ordinal, numeric or"),
        ({"min": {"kappa": float("inf")}}, "key 'min': Value error, gate 'kappa': inf is not"),
        ({"split": {"test": 0.2, "sed": 1}}, "unknown key 'split.sed'; did you mean 'seed'?"),
    ],
)
def test_calibration_and_judge_configs_check_their_shared_keys_with_the_same_words(
    change: dict[str, Any], message: str
) -> None:
    """The labelled-data keys, gates and split are one block of both configs: the same
    input is refused by both with the same message."""
    message = message.replace("Value error, ", "")
    with pytest.raises(CalibrationConfigError) as calibration:
        make_calibration_config({**LABELLED, **change}, source="c.yaml")
    with pytest.raises(OptimizeConfigError) as judge:
        make_judge_optimize_config({**LABELLED, **SEARCH, **change}, source="c.yaml")
    assert message in str(calibration.value), str(calibration.value)
    assert message in str(judge.value), str(judge.value)
    assert str(calibration.value).startswith("c.yaml: ")
    assert str(judge.value).startswith("c.yaml: ")


def test_overrides_replace_except_the_keys_that_merge() -> None:
    raw = {"min": {"kappa": 0.5}, "require": ["mcc"], "components": ["a"], "kind": "binary"}
    given = {"min": {"mcc": 0.2}, "require": ["f1"], "components": ["b"], "kind": None}
    merged = merge_overrides(raw, given, merged=("min", "require"))
    assert merged == {
        "min": {"kappa": 0.5, "mcc": 0.2},
        "require": ["mcc", "f1"],
        "components": ["b"],
        "kind": "binary",
    }
    assert raw["min"] == {"kappa": 0.5}  # the file's mapping is not changed in place
