"""The filter registry: built-ins, registration, kwarg validation and plugins."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.registry import DuplicateNameError, UnknownNameError
from assay.tasks.filters import (
    FILTERS,
    FilterConfigError,
    FilterParams,
    FilterType,
    UnknownFilterError,
    apply_filter_pipeline,
    build_filter,
    register_filter,
    validate_filter_step,
)

LM_EVAL_V04 = {
    "custom",
    "format_span",
    "lowercase",
    "majority_vote",
    "map",
    "multi_choice_regex",
    "regex",
    "regex_pos",
    "remove_whitespace",
    "take_first",
    "take_first_k",
    "uppercase",
}


class Reverse:
    """Reverse each response (a plain class in lm-eval's style)."""

    def __init__(self, times: int = 1) -> None:
        self.times = times

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [[r[:: -1 if self.times % 2 else 1] for r in entry] for entry in resps]


@pytest.fixture
def reverse() -> Iterator[str]:
    register_filter("reverse-test")(Reverse)
    try:
        yield "reverse-test"
    finally:
        FILTERS.unregister("reverse-test")


# ----------------------------------------------------------------------------- built-ins


def test_every_v04_filter_plus_noop_and_anchored_is_registered() -> None:
    assert set(FILTERS.names()) == LM_EVAL_V04 | {"noop", "anchored_multi_choice_regex"}
    assert "decontaminate" not in FILTERS  # a stub in lm-eval: deliberately not registered
    for name in FILTERS.names():
        assert FILTERS.origin(name) == "built-in"
        assert FILTERS.get(name).description  # a one-line description each
        assert "\n" not in FILTERS.get(name).description


def test_each_build_is_a_fresh_filter() -> None:
    first = build_filter("regex", {"regex_pattern": "(a)"})
    second = build_filter("regex", {"regex_pattern": "(a)"})
    assert first is not second


def test_built_in_kwargs_have_a_json_schema() -> None:
    schema = FILTERS.get("take_first_k").params_schema()
    assert schema is not None and schema["required"] == ["k"]
    custom = FILTERS.get("custom").params_schema()
    assert custom is not None and "filter_fn" in custom["properties"]


# ----------------------------------------------------------------------------- validation


def test_unknown_filter_names_get_a_did_you_mean() -> None:
    with pytest.raises(UnknownFilterError, match=r"unknown filter 'take_frist'.*'take_first'"):
        build_filter("take_frist")
    # one exception type for the config loader, and still the registry's type
    with pytest.raises(FilterConfigError):
        validate_filter_step("majority-vote", {})
    with pytest.raises(UnknownNameError):
        validate_filter_step("nope", {})


def test_take_first_k_without_k_names_the_kwarg() -> None:
    with pytest.raises(
        FilterConfigError, match="filter 'take_first_k': missing required kwarg 'k'"
    ) as info:
        validate_filter_step("take_first_k", {})
    assert info.value.filter_name == "take_first_k" and info.value.kwarg == "k"


@pytest.mark.parametrize("k", [0, -1, "8", True, 2.5])
def test_take_first_k_needs_a_positive_integer(k: object) -> None:
    with pytest.raises(FilterConfigError, match="kwarg 'k'"):
        validate_filter_step("take_first_k", {"k": k})


def test_an_invalid_regex_pattern_is_reported_with_the_reason() -> None:
    with pytest.raises(FilterConfigError, match=r"kwarg 'regex_pattern'.*not a valid regular"):
        validate_filter_step("regex", {"regex_pattern": "(unclosed"})
    with pytest.raises(FilterConfigError, match="kwarg 'regexes_to_ignore'"):
        validate_filter_step("multi_choice_regex", {"regexes_to_ignore": ["[a-"]})
    with pytest.raises(FilterConfigError, match="kwarg 'answer_sentinels'"):
        validate_filter_step("anchored_multi_choice_regex", {"answer_sentinels": ["(?<"]})
    # not re.error: an overflowing repeat count and deep nesting
    with pytest.raises(FilterConfigError, match=r"repetition number is too large"):
        validate_filter_step("regex", {"regex_pattern": "a{99999999999}"})
    with pytest.raises(FilterConfigError, match=r"nested too deeply"):
        validate_filter_step("regex", {"regex_pattern": "(" * 5000 + ")" * 5000})


def test_map_needs_a_dict() -> None:
    with pytest.raises(
        FilterConfigError, match=r"filter 'map': kwarg 'mapping_dict'.*dict"
    ) as info:
        validate_filter_step("map", {"mapping_dict": [["A", 0]]})
    assert info.value.kwarg == "mapping_dict"


def test_unknown_kwargs_are_named_with_a_suggestion() -> None:
    with pytest.raises(
        FilterConfigError, match=r"unknown kwarg 'regex'; did you mean 'regex_pattern'"
    ):
        validate_filter_step("regex", {"regex": "(a)"})
    with pytest.raises(FilterConfigError, match=r"unknown kwarg 'k'.*takes no kwargs"):
        validate_filter_step("take_first", {"k": 1})


@pytest.mark.parametrize(
    ("name", "kwargs", "kwarg"),
    [
        ("regex", {"group_select": "1"}, "group_select"),
        ("regex", {"fallback": None}, "fallback"),
        ("multi_choice_regex", {"ignore_case": "yes"}, "ignore_case"),
        ("custom", {"filter_fn": "utils.f"}, "filter_fn"),
        ("anchored_multi_choice_regex", {"fallback_to_positional": 1}, "fallback_to_positional"),
    ],
)
def test_mistyped_kwargs_are_named(name: str, kwargs: dict[str, Any], kwarg: str) -> None:
    with pytest.raises(FilterConfigError, match=f"filter '{name}': kwarg '{kwarg}'") as info:
        validate_filter_step(name, kwargs)
    assert info.value.kwarg == kwarg


def test_custom_without_filter_fn_is_a_missing_kwarg() -> None:
    with pytest.raises(FilterConfigError, match="missing required kwarg 'filter_fn'"):
        validate_filter_step("custom", {})


def test_kwargs_must_be_a_mapping_with_string_keys() -> None:
    with pytest.raises(FilterConfigError, match="kwargs must be a mapping"):
        validate_filter_step("regex", ["regex_pattern", "a"])  # type: ignore[arg-type]
    with pytest.raises(FilterConfigError, match="kwarg names must be strings"):
        validate_filter_step("regex", {1: "a"})  # type: ignore[dict-item]
    validate_filter_step("take_first", None)  # YAML ``kwargs:`` left empty


def test_a_step_function_must_be_a_name_or_a_callable() -> None:
    with pytest.raises(FilterConfigError, match="must be a filter name or a callable, got int"):
        build_filter(3)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- registering


def test_a_plain_class_registers_and_its_kwargs_are_checked(reverse: str) -> None:
    info = FILTERS.get(reverse)
    assert info.description == "Reverse each response (a plain class in lm-eval's style)."
    assert FILTERS.origin(reverse) == "code"
    assert apply_filter_pipeline([(reverse, {})], [["abc"]], [{}]) == [["cba"]]
    assert apply_filter_pipeline([(reverse, {"times": 2})], [["abc"]], [{}]) == [["abc"]]
    with pytest.raises(FilterConfigError, match=r"unknown kwarg 'tims'; did you mean 'times'"):
        validate_filter_step(reverse, {"tims": 2})


def test_a_built_in_name_cannot_be_taken_without_replace() -> None:
    with pytest.raises(DuplicateNameError, match="'regex' is already registered by built-in"):
        register_filter("regex")(Reverse)
    assert FILTERS.get("regex").factory is not Reverse


def test_a_factory_with_required_kwargs_reports_them_missing() -> None:
    def shout(*, suffix: str) -> Reverse:
        """Shout."""
        return Reverse()

    with pytest.raises(FilterConfigError, match="missing required kwarg 'suffix'"):
        build_filter(shout, {})


def test_a_constructor_that_rejects_its_kwargs_is_a_config_error() -> None:
    class Picky:
        def __init__(self, **kwargs: Any) -> None:
            self.k = kwargs.pop("k")  # lm-eval's style of required kwarg

        def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
            return resps

    with pytest.raises(FilterConfigError, match=r"rejected its kwargs: KeyError"):
        build_filter(Picky, {})
    assert isinstance(build_filter(Picky, {"k": 1}), Picky)


def test_a_factory_must_return_something_with_apply() -> None:
    with pytest.raises(FilterConfigError, match="has no apply"):
        build_filter(lambda: "not a filter")


def test_a_filter_params_subclass_is_validated_like_the_built_ins() -> None:
    class Suffix(FilterParams):
        """Append a suffix."""

        suffix: str

        def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
            return [[r + self.suffix for r in entry] for entry in resps]

    register_filter("suffix-test", aliases=("sfx",))(Suffix)
    try:
        assert apply_filter_pipeline([("sfx", {"suffix": "!"})], [["a"]], [{}]) == [["a!"]]
        with pytest.raises(FilterConfigError, match="filter 'suffix-test': missing"):
            validate_filter_step("suffix-test", {})
    finally:
        FILTERS.unregister("suffix-test")
    assert "sfx" not in FILTERS


# ----------------------------------------------------------------------------- plugins


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("assay_filters_plugin")]:
        del sys.modules[name]


def install_plugin(site: Path, entries: str) -> None:
    (site / "assay_filters_plugin.py").write_text(
        "from assay.tasks.filters import FilterType, register_filter\n"
        "class Exclaim:\n"
        '    """Add an exclamation mark."""\n'
        "    def apply(self, resps, docs):\n"
        '        return [[r + "!" for r in entry] for entry in resps]\n'
        'EXCLAIM = FilterType.of("exclaim-test", Exclaim)\n'
        'HIJACK = FilterType.of("regex", Exclaim)\n'
        "NOT_A_FILTER = 42\n"
    )
    info = site / "assay_filters_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: assay-filters-plugin\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(f"[assay.filters]\n{entries}")


def test_plugins_come_from_the_assay_filters_entry_point_group(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install_plugin(
        site,
        "exclaim = assay_filters_plugin:EXCLAIM\n"
        "hijack = assay_filters_plugin:HIJACK\n"
        "junk = assay_filters_plugin:NOT_A_FILTER\n",
    )
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        FILTERS.reload_plugins()
    try:
        assert FILTERS.origin("exclaim-test").startswith("plugin exclaim")
        assert apply_filter_pipeline([("exclaim-test", {})], [["hi"]], [{}]) == [["hi!"]]
        # a plugin never replaces a built-in, and junk entries are skipped with a warning
        assert FILTERS.origin("regex") == "built-in"
        assert "name 'regex' is taken by 'regex' (built-in)" in caplog.text
        assert "junk (assay_filters_plugin:NOT_A_FILTER) holds 'int', not a filter" in caplog.text
    finally:
        FILTERS.unregister("exclaim-test")


def test_filter_type_of_reads_the_docstring_and_rejects_non_callables() -> None:
    assert FilterType.of("r", Reverse).description.startswith("Reverse each response")
    assert FilterType.of("r", Reverse, description="mine").description == "mine"
    with pytest.raises(TypeError, match="must be callable"):
        FilterType.of("r", 3)  # type: ignore[arg-type]
