"""The scorer registry: lookup, params validation, schemas, configs, plugins."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest
from pydantic import Field

import assay
from assay import ScorerConfig, ScorerParams, ScorerParamsError, UnknownScorerError, create_scorer
from assay.scoring import registry

CODE_SCORERS = {
    "completeness",
    "content-similarity",
    "keyword-coverage",
    "textual-difference",
    "tone",
    "tool-call-accuracy-code",
    "trajectory-accuracy-code",
    "trajectory-code",
}


def test_every_code_scorer_is_listed_with_a_json_schema() -> None:
    infos = {info.type: info for info in assay.list_scorers()}
    assert set(infos) >= CODE_SCORERS
    assert len([t for t in infos if t.startswith("check-")]) == 11
    for info in infos.values():
        assert info.params_schema["type"] == "object"
        assert info.label and info.description
        low, high = info.score_range
        assert low < high


def test_schema_carries_defaults_and_types() -> None:
    schema = assay.get_scorer_type("content-similarity").params_schema()
    props = schema["properties"]
    assert props["ignore_case"] == {
        "default": True,
        "description": "Lowercase both texts first.",
        "title": "Ignore Case",
        "type": "boolean",
    }
    assert props["compare_to"]["enum"] == ["auto", "input", "ground_truth"]
    assert props["compare_to"]["default"] == "auto"


def test_create_scorer_sets_identity_direction_and_params() -> None:
    scorer = create_scorer("content-similarity", ignore_case=False)
    assert scorer.id == "content-similarity"
    assert scorer.type_id == "content-similarity"
    assert scorer.params["ignore_case"] is False
    assert scorer.params["ignore_whitespace"] is True  # merged over defaults
    assert scorer.higher_is_better is True


def test_camel_case_aliases_are_accepted() -> None:
    assert create_scorer("content-similarity", ignoreCase=False).params["ignore_case"] is False


def test_unknown_type_suggests_the_closest() -> None:
    with pytest.raises(UnknownScorerError) as excinfo:
        create_scorer("content-similarty")
    assert "did you mean 'content-similarity'" in str(excinfo.value)


def test_unknown_param_names_the_param_and_the_allowed_ones() -> None:
    with pytest.raises(ScorerParamsError) as excinfo:
        create_scorer("content-similarity", ignore_cas=True)
    message = str(excinfo.value)
    assert "param 'ignore_cas' is not allowed; did you mean 'ignore_case'?" in message
    assert "allowed params: compare_to, ignore_case, ignore_whitespace" in message


def test_bad_param_type_names_the_param() -> None:
    with pytest.raises(
        ScorerParamsError, match="param 'ignore_case': Input should be a valid boolean"
    ):
        create_scorer("content-similarity", ignore_case="perhaps")


def test_bad_enum_value_is_rejected() -> None:
    with pytest.raises(ScorerParamsError, match="compare_to"):
        create_scorer("keyword-coverage", compare_to="context")


def test_config_object_and_dict_forms() -> None:
    config = ScorerConfig(type="tone", params={"reference_tone": "Great!"}, weight=2, label="Tone")
    scorer = create_scorer(config)
    assert scorer.weight == 2.0 and scorer.label == "Tone"
    assert scorer.params == {"reference_tone": "Great!"}
    from_dict = create_scorer({"type": "tone", "params": {"referenceTone": "Great!"}})
    assert from_dict.fingerprint == scorer.fingerprint


def test_config_rejects_unknown_fields_and_bad_weight() -> None:
    with pytest.raises(ScorerParamsError):
        create_scorer({"type": "tone", "wieght": 3})
    with pytest.raises(ScorerParamsError):
        create_scorer({"type": "tone", "weight": -1})


def test_aliases_resolve_to_the_canonical_type() -> None:
    scorer = create_scorer("checks.includes", expected="x")
    assert scorer.type_id == "check-includes"


def test_fingerprint_depends_on_params_only_through_their_values() -> None:
    a = create_scorer("content-similarity")
    b = create_scorer("content-similarity", ignore_case=True)  # the default, spelled out
    c = create_scorer("content-similarity", ignore_case=False)
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint
    assert a.fingerprint != create_scorer("keyword-coverage").fingerprint


def test_registering_a_duplicate_id_fails() -> None:
    existing = assay.get_scorer_type("tone")
    with pytest.raises(registry.ScorerRegistryError, match="already registered"):
        registry.register(existing)


def test_decorator_registers_a_custom_type() -> None:
    class LengthParams(ScorerParams):
        limit: int = Field(default=10, gt=0)

    @assay.register_scorer(
        "test-max-length", label="Max length", description="short is good", params=LengthParams
    )
    def build(params: LengthParams) -> assay.Scorer:
        return assay.Scorer("test-max-length").score(
            lambda ctx: 1.0 if len(ctx.output_text) <= params.limit else 0.0
        )

    try:
        scorer = create_scorer("test-max-length", limit=3)
        assert scorer.run_sync(output="abc").score == 1.0
        assert scorer.run_sync(output="abcd").score == 0.0
        with pytest.raises(ScorerParamsError, match="greater than 0"):
            create_scorer("test-max-length", limit=0)
    finally:
        registry.unregister("test-max-length")


def test_a_code_scorer_description_defaults_to_its_factory_docstring() -> None:
    @assay.register_scorer("test-doc-described", label="Doc described", kind="check")
    def build(params: registry.NoParams) -> assay.Scorer:
        """Always one (a test scorer)."""
        return assay.Scorer("test-doc-described").score(lambda ctx: 1.0)

    try:
        info = registry.get_scorer_type("test-doc-described").info()
        assert (info.description, info.kind, info.higher_is_better, info.score_range) == (
            "Always one (a test scorer).",
            "check",
            True,
            (0.0, 1.0),
        )
    finally:
        registry.unregister("test-doc-described")


def test_a_code_scorer_without_description_or_docstring_is_refused() -> None:
    def build(params: registry.NoParams) -> assay.Scorer:
        return assay.Scorer("test-undescribed").score(lambda ctx: 1.0)

    with pytest.raises(TypeError, match="'test-undescribed': give a description"):
        assay.register_scorer("test-undescribed", label="Undescribed")(build)
    assert "test-undescribed" not in registry.SCORER_TYPES.names()


def test_third_party_entry_point_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real installed-distribution layout on sys.path, discovered via importlib.metadata."""
    package = tmp_path / "assay_plugin_example"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from assay import Scorer, ScorerType
            from assay.scoring.registry import NoParams

            def _build(params):
                return Scorer("plugin-always-one").score(lambda ctx: 1.0)

            SCORER = ScorerType(
                type_id="plugin-always-one",
                label="Always one",
                description="A plugin scorer",
                params_model=NoParams,
                build=_build,
            )
            """
        )
    )
    dist = tmp_path / "assay_plugin_example-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: assay-plugin-example\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[assay.scorers]\nalways-one = assay_plugin_example:SCORER\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry.reload_plugins()
        assert "plugin-always-one" in {info.type for info in assay.list_scorers()}
        assert create_scorer("plugin-always-one").run_sync(output="x").score == 1.0
    finally:
        registry.unregister("plugin-always-one")


def test_broken_plugin_does_not_break_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    dist = tmp_path / "assay_broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[assay.scorers]\nbroken = no_such_module_xyz:THING\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_plugins()
    assert "could not load scorer type plugin broken" in caplog.text
    assert create_scorer("tone").run_sync(output="Fine.").status == "ready"


def test_missing_required_param_is_named_in_snake_case() -> None:
    with pytest.raises(ScorerParamsError) as excinfo:
        create_scorer("check-includes")
    assert "param 'expected': Field required" in str(excinfo.value)


def test_a_plugin_never_replaces_a_builtin_scorer_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    package = tmp_path / "assay_plugin_shadow"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from assay import Scorer, ScorerType
            from assay.scoring.registry import NoParams

            TONE = ScorerType(
                type_id="tone",
                label="Impostor",
                description="A plugin claiming a built-in's id",
                params_model=NoParams,
                build=lambda params: Scorer("tone").score(lambda ctx: 0.0),
            )
            """
        )
    )
    dist = tmp_path / "assay_plugin_shadow-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: assay-plugin-shadow\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[assay.scorers]\ntone = assay_plugin_shadow:TONE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_plugins()
    assert assay.get_scorer_type("tone").label == "Tone Consistency"
    assert "name 'tone' is taken by 'tone'" in caplog.text
    assert registry.SCORER_TYPES.origin("tone") == "built-in"


def test_registering_a_builtin_id_from_code_needs_replace() -> None:
    original = assay.get_scorer_type("tone")
    with pytest.raises(registry.DuplicateScorerError, match="pass replace=True"):
        registry.register(dataclasses.replace(original, label="Mine"))
    try:
        registry.register(dataclasses.replace(original, label="Mine"), replace=True)
        assert assay.get_scorer_type("tone").label == "Mine"
    finally:
        registry.register(original, replace=True)


def test_mode_is_derived_from_kind() -> None:
    assert assay.get_scorer_type("faithfulness").mode == "async"
    assert assay.get_scorer_type("tone").mode == "sync"
    assert assay.get_scorer_type("check-includes").mode == "sync"
    assert {(i.kind, i.mode) for i in assay.list_scorers()} <= {
        ("judge", "async"),
        ("code", "sync"),
        ("check", "sync"),
    }
