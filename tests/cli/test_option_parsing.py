"""``cli/option_parsing.py``: flags → the operations' values, a bad one a ``CliError``
naming the flag."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from assay.cli.common import CliError
from assay.cli.option_parsing import (
    _NOT_RUN_CONFIG,
    calibration_options,
    chat_options,
    parse_min,
    run_request,
    task_run_options,
)
from assay.cli.run_cmd import run
from assay.operations.run_config import RunConfig


def _run_flags(**given: object) -> dict[str, object]:
    """``assay run``'s flags as its function receives them: every parameter at its
    default, ``given`` overriding."""
    flags = {name: p.default for name, p in inspect.signature(run).parameters.items()}
    return flags | given


def test_parse_min_reads_metric_equals_number() -> None:
    assert parse_min([" kappa =0.6", "spearman=-1e-1"]) == {"kappa": 0.6, "spearman": -0.1}
    assert parse_min([]) == {}


@pytest.mark.parametrize(
    "text", ["kappa", "=0.6", " =0.6", "kappa=", "kappa=nan", "kappa=inf", "kappa=0,6", "k=1=2"]
)
def test_parse_min_refuses_anything_else_naming_the_flag(text: str) -> None:
    with pytest.raises(CliError, match=r"^--min .*expected METRIC=NUMBER"):
        parse_min([text])


def test_every_run_flag_passed_through_is_a_run_config_field() -> None:
    """``run`` hands its parameters to ``run_config_from`` by name: a flag renamed out of
    step with the config's field would be refused as an unknown key at run time."""
    fields = set(RunConfig.model_fields) | {
        f.alias for f in RunConfig.model_fields.values() if f.alias
    }
    passed = set(inspect.signature(run).parameters) - set(_NOT_RUN_CONFIG)
    assert passed <= fields, passed - fields
    assert set(_NOT_RUN_CONFIG) <= set(inspect.signature(run).parameters)


def test_run_request_builds_the_config_from_the_flags(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "input": "x", "output": "y", "expected": "y"}\n')
    cfg, gates = run_request(
        _run_flags(
            data=str(data),
            scorers=["exact-match", '{"type": "keyword-coverage"}'],
            concurrency=3,
            json="out.json",
            limit=5,
            store=False,
            name="n",
            fail_under=["exact-match=0.5"],
        )
    )
    assert cfg.data == str(data) and cfg.scorers == ["exact-match", {"type": "keyword-coverage"}]
    assert (cfg.concurrency, cfg.json_path, cfg.limit, cfg.store, cfg.name) == (
        3,
        "out.json",
        5,
        False,
        "n",
    )
    assert cfg.require_calibrated is False and cfg.repeats == 1  # unset: the defaults
    assert gates.fail_under == {"exact-match": 0.5}


def test_run_request_refusals_are_one_cli_error_naming_the_input(tmp_path: Path) -> None:
    data = str(tmp_path / "d.jsonl")
    with pytest.raises(CliError, match="--gate-on 'median'"):
        run_request(_run_flags(data=data, scorers=["exact-match"], gate_on="median"))
    with pytest.raises(CliError, match="no scorer given"):
        run_request(_run_flags(data=data))
    with pytest.raises(CliError, match="--target"):
        run_request(_run_flags(data=data, scorers=["exact-match"], target="{not json"))
    with pytest.raises(CliError, match="concurrency"):
        run_request(_run_flags(data=data, scorers=["exact-match"], concurrency=0))
    with pytest.raises(CliError):  # a gate on a scorer the run does not have
        run_request(_run_flags(data=data, scorers=["exact-match"], fail_under=["nope=0.5"]))


def test_calibration_options_checks_gate_on_min_and_backend() -> None:
    assert calibration_options(None, None, None, None, None, None) == {
        "min": None,
        "gate_on": None,
    }
    options = calibration_options(["kappa=0.6"], "point", ["roc_auc"], "ray", "auto", 2)
    assert options == {
        "min": {"kappa": 0.6},
        "gate_on": "point",
        "require": ["roc_auc"],
        "backend": "ray",
        "ray_address": "auto",
        "workers": 2,
    }
    with pytest.raises(CliError, match="--gate-on 'mean': expected 'ci' or 'point'"):
        calibration_options(None, "mean", None, None, None, None)
    with pytest.raises(CliError, match="--backend 'spark'"):
        calibration_options(None, None, None, "spark", None, None)


def test_task_run_options_keeps_only_what_was_given() -> None:
    common = {"ray_address": None, "workers": None}
    assert task_run_options(store=True, concurrency=None, name=None, backend=None, **common) == {
        "progress": False
    }
    given = task_run_options(store=True, concurrency=4, name="t", backend="ray", **common)
    assert given == {"progress": False, "backend": "ray", "concurrency": 4, "name": "t"}
    with pytest.raises(CliError, match="--no-store cannot be used"):
        task_run_options(store=False, concurrency=None, name=None, backend="ray", **common)


def test_chat_options_refuses_multiturn_without_a_template() -> None:
    assert chat_options(True, None, "be brief").system_instruction == "be brief"
    with pytest.raises(CliError, match=r"^--fewshot-as-multiturn: "):
        chat_options(False, True, None)
