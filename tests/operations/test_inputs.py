"""Text values → Python values, one rule set for CLI options and form fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.inputs import (
    InputError,
    check_pairs,
    json_or_text,
    parse_params,
    read_value,
    scorer_value,
)


def test_json_or_text() -> None:
    assert json_or_text('{"type": "tone"}') == {"type": "tone"}
    assert json_or_text(" [1, 2]") == [1, 2]
    assert json_or_text("exact-match") == "exact-match"
    assert json_or_text(None) is None
    assert json_or_text("{not json") == "{not json"  # lenient: text stays text
    with pytest.raises(InputError, match="--scorer: invalid JSON"):
        json_or_text("{not json", option="--scorer", strict=True)


def test_read_value_reads_files_and_inline_json(tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    assert read_value(f"@{path}") == [{"role": "user", "content": "hi"}]
    assert read_value('  {"a": 1}  ') == {"a": 1}
    assert read_value("[oops") == "[oops"
    assert read_value(" plain ") == " plain "
    with pytest.raises(InputError, match="--output: cannot read /no/such/file"):
        read_value("@/no/such/file", "--output")


def test_parse_params() -> None:
    assert parse_params(["n=3", "flag=true", 'words=["a"]', "text=hello", "eq=a=b"]) == {
        "n": 3,
        "flag": True,
        "words": ["a"],
        "text": "hello",
        "eq": "a=b",
    }
    with pytest.raises(InputError, match="--param 'oops': expected key=value"):
        parse_params(["oops"])


def test_check_pairs() -> None:
    assert check_pairs(["input=question"], "--map") == ["input=question"]
    with pytest.raises(InputError, match="--map 'input=': expected key=value"):
        check_pairs(["input="], "--map")


def test_a_scorer_option_may_be_a_yaml_config_file(tmp_path: Path) -> None:
    good = tmp_path / "judge.yaml"
    good.write_text("type: toxicity\nparams:\n  instructions: Be strict.\n", encoding="utf-8")
    assert scorer_value(str(good)) == {"type": "toxicity", "params": {"instructions": "Be strict."}}
    assert scorer_value("exact-match") == "exact-match"
    assert scorer_value('{"type": "tone"}') == {"type": "tone"}
    with pytest.raises(InputError, match="cannot read"):
        scorer_value(str(tmp_path / "missing.yaml"))
    broken = tmp_path / "broken.yml"
    broken.write_text("type: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid YAML"):
        scorer_value(str(broken))
    for text in ("- a\n- b\n", "params: {}\n", "type: 3\n", "!!python/object:os.system x\n"):
        hostile = tmp_path / "hostile.yaml"
        hostile.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=r"--scorer: .* (scorer config|invalid YAML|mapping)"):
            scorer_value(str(hostile))


def test_a_scorer_config_file_reads_variables_like_every_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("type: toxicity\nparams:\n  model: ${JUDGE}\n", encoding="utf-8")
    monkeypatch.setenv("JUDGE", "openai/gpt-4o-mini")
    assert scorer_value(str(config)) == {
        "type": "toxicity",
        "params": {"model": "openai/gpt-4o-mini"},
    }
    monkeypatch.delenv("JUDGE")
    with pytest.raises(InputError, match=r"--scorer: .*judge\.yaml: environment variable JUDGE"):
        scorer_value(str(config))
