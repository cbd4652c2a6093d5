from __future__ import annotations

import pytest

from assay.datasets import MappingError, parse_mapping
from assay.datasets.mapping import MissingColumnError, RowMapper


def test_parse_mapping_pairs() -> None:
    assert parse_mapping(["input=question", " expected_output = answer "]) == {
        "input": "question",
        "expected_output": "answer",
    }


def test_parse_mapping_accepts_dict_and_none() -> None:
    assert parse_mapping({"input": "q"}) == {"input": "q"}
    assert parse_mapping(None) == {}
    assert parse_mapping("input=q") == {"input": "q"}


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (["question=input"], "not an Item field"),
        (["inputs=q"], "not an Item field"),
        (["input"], "expected FIELD=COLUMN"),
        (["input="], "source column is empty"),
        (["input.x=q"], "only metadata has sub-keys"),
        (["metadata..x=q"], "empty key"),
        (["input=a", "input=b"], "mapped twice"),
    ],
)
def test_parse_mapping_errors(spec: list[str], needle: str) -> None:
    with pytest.raises(MappingError, match=needle):
        parse_mapping(spec)


def test_bad_target_error_lists_item_fields() -> None:
    with pytest.raises(MappingError) as info:
        parse_mapping(["answer=expected"])
    assert "expected_output" in str(info.value)
    assert "'answer'" in str(info.value)


def test_identity_and_extras_without_mapping() -> None:
    mapped = RowMapper().apply({"id": "x", "input": "q", "lang": "en", "score": 3})
    assert mapped.fields == {"id": "x", "input": "q"}
    assert mapped.extras == {"lang": "en", "score": 3}
    assert mapped.metadata_keys == []


def test_mapped_columns_are_consumed_and_same_named_column_goes_to_metadata() -> None:
    mapped = RowMapper(["input=question"]).apply({"question": "q", "input": "other", "id": "1"})
    assert mapped.fields == {"input": "q", "id": "1"}
    assert mapped.extras == {"input": "other"}


def test_dotted_source_reaches_into_nested_objects() -> None:
    mapper = RowMapper(["input=q.text", "metadata.topic=meta.topic"])
    mapped = mapper.apply({"q": {"text": "hi"}, "meta": {"topic": "t", "other": 1}, "x": 2})
    assert mapped.fields == {"input": "hi"}
    assert mapped.metadata_keys == [(("topic",), "t")]
    # the whole top-level column is consumed, not copied into metadata as well
    assert mapped.extras == {"x": 2}


def test_literal_dotted_column_wins_over_nested_lookup() -> None:
    mapped = RowMapper(["input=a.b"]).apply({"a.b": "flat", "a": {"b": "nested"}})
    assert mapped.fields["input"] == "flat"
    assert mapped.extras == {"a": {"b": "nested"}}


def test_missing_mapped_column() -> None:
    with pytest.raises(MissingColumnError) as info:
        RowMapper(["input=question"]).apply({"prompt": "q", "answer": "a"})
    assert info.value.field == "input"
    assert info.value.column == "question"
    assert "answer, prompt" in str(info.value)


def test_missing_nested_path() -> None:
    with pytest.raises(MissingColumnError, match=r"meta\.topic"):
        RowMapper(["metadata.topic=meta.topic"]).apply({"input": "q", "meta": {"x": 1}})
