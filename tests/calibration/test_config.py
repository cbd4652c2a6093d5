"""The calibration config: the contract keys, YAML details, errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.calibration.config import (
    CalibrationConfigError,
    label_text,
    load_calibration_config,
    make_calibration_config,
)


def test_the_contract_keys_load_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(
        "scorer: [faithfulness, {type: faithfulness, params: {model: openai/gpt-4o}}]\n"
        "data: labelled.jsonl\n"
        "label: metadata.verdict\n"
        "label_map: {yes: 1, no: 0}\n"
        "kind: binary\n"
        "threshold: 0.7\n"
        "repeats: 3\n"
        "split: {test: 0.3, seed: 7}\n"
        "min: {kappa: 0.6}\n"
    )
    config = load_calibration_config(path, min={"mcc": 0.4}, gate_on="point")
    assert config.data == str(tmp_path / "labelled.jsonl")  # relative to the config file
    assert len(config.scorer_configs) == 2 and config.label == "metadata.verdict"
    assert config.label_map == {"yes": 1.0, "no": 0.0}  # YAML's True/False read back as text
    assert config.kind == "binary" and config.threshold == 0.7 and config.repeats == 3
    assert config.split is not None and (config.split.test, config.split.seed) == (0.3, 7)
    assert config.gates == {"kappa": 0.6, "mcc": 0.4} and config.gate_on == "point"


def test_defaults() -> None:
    config = make_calibration_config({"scorer": "x", "data": "d.jsonl", "kind": "numeric"})
    assert config.label == "expected_output" and config.repeats == 1 and config.split is None
    assert config.gates == {} and config.gate_on == "ci" and config.resamples == 1000


def test_annotations_default_the_label_to_the_human_label() -> None:
    config = make_calibration_config({"scorer": "x", "annotations": "run1", "kind": "binary"})
    assert config.annotations == "run1" and config.label == "metadata.human_label"
    chosen = make_calibration_config(
        {"scorer": "x", "annotations": "run1", "kind": "binary", "label": "metadata.other"}
    )
    assert chosen.label == "metadata.other"  # an explicit label still wins


def test_label_text_matches_yaml_spellings() -> None:
    assert label_text(True) == label_text("yes") == label_text("True") == "yes"
    assert label_text(1.0) == label_text(1) == "1"
    assert label_text(" Good ") == "Good"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"data": "d", "kind": "binary"}, "missing key 'scorer'"),
        ({"scorer": "x", "data": "d", "dataset": "n", "kind": "binary"}, "exactly one of 'data'"),
        ({"scorer": "x", "data": "d", "version": 2, "kind": "binary"}, "'version' needs 'dataset'"),
        (
            {"scorer": "x", "dataset": "n", "annotations": "r", "kind": "binary"},
            "exactly one of 'data'.*'annotations'",
        ),
        ({"scorer": "x", "kind": "binary"}, "exactly one of 'data'"),
        ({"scorer": "x", "annotations": "", "kind": "binary"}, "key 'annotations'"),
        ({"scorer": "x", "annotations": "r", "version": 1, "kind": "binary"}, "'version' needs"),
        (
            {"scorer": "x", "data": "d", "kind": "pairwise", "threshold": 0.5},
            "'threshold' does not apply",
        ),
        ({"scorer": "x", "data": "d", "kind": "numeric", "label_range": [5, 0]}, "'label_range'"),
        (
            {"scorer": "x", "data": "d", "kind": "numeric", "split": {"test": 0.2, "sed": 1}},
            "key 'split.sed'",
        ),
        (
            {"scorer": "x", "data": "d", "kind": "numeric", "thresold": 0.5},
            "did you mean 'threshold'",
        ),
        ({"scorer": "x", "data": "d", "kind": "numeric", "gate_on": "mean"}, "key 'gate_on'"),
    ],
)
def test_errors_name_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(CalibrationConfigError, match=message):
        make_calibration_config(raw, source="cal.yaml")


def test_unreadable_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(CalibrationConfigError, match="cannot read"):
        load_calibration_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(CalibrationConfigError, match="expected a mapping"):
        load_calibration_config(bad)
