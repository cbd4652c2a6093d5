"""``assay.extras``: the one-line message for a missing extra, checked without importing."""

from __future__ import annotations

import pickle
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from assay.extras import (
    EXTRAS,
    MissingExtraError,
    extra_import,
    install_hint,
    is_installed,
    missing_modules,
    require_extra,
)


def test_the_message_names_the_feature_the_extra_and_the_pip_command() -> None:
    assert install_hint("the 'completeness' scorer", "nlp") == (
        "the 'completeness' scorer needs the 'nlp' extra: pip install 'assay[nlp]'"
    )


def test_an_installed_extra_passes() -> None:
    require_extra("calibration", "judge calibration")  # scipy is in the dev install
    assert missing_modules("calibration") == []


def test_a_blocked_module_is_missing_and_raises_the_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sacrebleu", None)
    assert not is_installed("sacrebleu")
    assert missing_modules("tasks") == ["sacrebleu"]
    with pytest.raises(MissingExtraError) as caught:
        require_extra("tasks", "benchmark tasks")
    assert str(caught.value) == (
        "benchmark tasks needs the 'tasks' extra: pip install 'assay[tasks]'"
    )
    assert caught.value.extra == "tasks"
    assert caught.value.name == "sacrebleu"
    assert isinstance(caught.value, ImportError)  # old `except ImportError` still holds


def test_an_absent_module_is_missing() -> None:
    assert not is_installed("assay_no_such_module_zz")
    assert not is_installed("assay_no_such_parent_zz.child")


def test_an_unknown_extra_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown extra 'nlpp'"):
        require_extra("nlpp", "x")


def test_every_extra_lists_modules_the_dev_install_has() -> None:
    # dev = all extras, so in the test environment nothing may be missing: a typo in a
    # module name here would make the feature refuse to run everywhere
    for extra in EXTRAS:
        assert missing_modules(extra) == [], extra


def test_extra_import_converts_only_the_extras_own_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gepa", None)
    needs = pytest.raises(MissingExtraError, match=r"pip install 'assay\[optimize\]'")
    with needs, extra_import("optimize", "prompt optimization"):
        import gepa.api  # noqa: F401
    # an ImportError of something else (a bug, another package) passes through unchanged
    with pytest.raises(ImportError) as caught, extra_import("optimize", "optimization"):
        import assay_no_such_module_zz  # type: ignore[import-not-found]  # noqa: F401
    assert not isinstance(caught.value, MissingExtraError)


def test_the_error_survives_pickling() -> None:
    error = MissingExtraError("judge calibration", "calibration", "scipy")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert (copy.feature, copy.extra, copy.name) == ("judge calibration", "calibration", "scipy")


# ----------------------------------------------------------------------------- pyproject

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
HEAVY = ("spacy", "pyarrow", "scipy", "scikit-learn", "plotly", "sacrebleu", "rouge-score",
         "psycopg", "gepa", "fastapi", "uvicorn", "python-multipart", "krippendorff",
         "rapidfuzz")  # fmt: skip


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return project


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", requirement, maxsplit=1)[0].lower()


def test_the_core_has_none_of_the_heavy_libraries() -> None:
    core = {_name(r) for r in _project()["dependencies"]}
    assert not core & set(HEAVY), core & set(HEAVY)


def test_every_extra_of_the_code_is_declared_and_all_and_dev_hold_them_all() -> None:
    extras = _project()["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    (everything,) = extras["all"]
    assert set(re.findall(r"[\w-]+", everything.removeprefix("assay"))) >= set(EXTRAS)
    assert "assay[all]" in extras["dev"]  # the README's test line installs everything


def test_the_spacy_model_is_pinned_by_url_and_sha256() -> None:
    (model,) = [r for r in _project()["optional-dependencies"]["nlp"] if "web-sm" in r]
    assert re.fullmatch(r"[\w-]+ @ https://files\.pythonhosted\.org/\S+\.whl#sha256=[0-9a-f]{64}",
                        model), model  # fmt: skip


def test_every_capability_extra_of_pyproject_is_known_to_the_code() -> None:
    # an extra the code does not know cannot be named by the one-line message; hf-evaluate
    # only adds evaluate's own numbers to metrics that also run without it
    declared = set(_project()["optional-dependencies"]) - {"all", "dev", "hf-evaluate"}
    assert declared == set(EXTRAS)
