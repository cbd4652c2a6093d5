"""TaskConfig / GroupConfig: lm-eval's fields and defaults, normalised views, strict keys."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.tasks.config import (
    FewshotConfig,
    GroupConfig,
    MetricEntry,
    Pipeline,
    TaskConfig,
)


def task(**extra: Any) -> TaskConfig:
    base: dict[str, Any] = {"task": "t", "doc_to_text": "{{q}}", "doc_to_target": "{{a}}"}
    base.update(extra)
    return TaskConfig.model_validate(base)


def test_defaults_are_lm_evals() -> None:
    config = task()
    assert config.output_type == "generate_until"
    assert config.target_delimiter == " "
    assert config.fewshot_delimiter == "\n\n"
    assert config.description == ""
    assert config.repeats == 1
    assert config.num_fewshot is None
    assert config.filter_list is None
    assert config.metric_list is None
    assert config.should_decontaminate is False
    assert config.unsafe_code is False


def test_unknown_key_suggests_the_closest() -> None:
    with pytest.raises(ValidationError) as info:
        TaskConfig.model_validate({"task": "t", "doc_to_txt": "x", "doc_to_target": "y"})
    assert "unknown key 'doc_to_txt' (did you mean 'doc_to_text'?)" in str(info.value)


def test_metric_entry_moves_extra_keys_into_kwargs() -> None:
    entry = MetricEntry.model_validate(
        {"metric": "exact_match", "aggregation": "mean", "ignore_case": True, "kwargs": {"x": 1}}
    )
    assert entry.metric == "exact_match"
    assert entry.aggregation == "mean"
    assert entry.higher_is_better is None
    assert entry.kwargs == {"ignore_case": True, "x": 1}


def test_metric_entry_typo_of_a_known_key_is_an_error_not_a_kwarg() -> None:
    with pytest.raises(ValidationError, match="did you mean 'aggregation'"):
        MetricEntry.model_validate({"metric": "acc", "agregation": "mean"})


def test_metric_entry_kwarg_given_twice_is_an_error() -> None:
    with pytest.raises(ValidationError, match="'average' is given both inline and under"):
        MetricEntry.model_validate({"metric": "f1", "average": "micro", "kwargs": {"average": 1}})


def test_metric_entry_from_a_bare_name_and_a_callable() -> None:
    def my_metric(references: Any, predictions: Any) -> float:
        return 0.0

    assert MetricEntry.model_validate("acc").name == "acc"
    entry = MetricEntry.model_validate({"metric": my_metric, "reduction": "mean"})
    assert entry.name == "my_metric"
    assert entry.reduction == "mean"


def test_filter_steps_take_inline_kwargs_and_a_kwargs_block() -> None:
    config = task(
        filter_list=[
            {
                "name": "strict",
                "filter": [
                    {"function": "regex", "regex_pattern": "#### (\\d+)"},
                    {"function": "regex", "kwargs": {"group_select": -1}},
                    {"function": "take_first"},
                ],
            }
        ]
    )
    (pipeline,) = config.pipelines()
    assert pipeline.name == "strict"
    assert pipeline.steps == [
        ("regex", {"regex_pattern": "#### (\\d+)"}),
        ("regex", {"group_select": -1}),
        ("take_first", {}),
    ]


def test_filter_step_typo_of_function_is_an_error() -> None:
    with pytest.raises(ValidationError, match="did you mean 'function'"):
        task(filter_list=[{"name": "x", "filter": [{"functon": "regex"}]}])


def test_no_filter_list_is_one_pipeline_none_taking_the_first() -> None:
    config = task(metric_list=[{"metric": "exact_match"}])
    assert config.pipelines() == [
        Pipeline("none", [("take_first", {})], [MetricEntry(metric="exact_match")])
    ]


def test_pipeline_metric_list_wins_else_a_copy_of_the_tasks() -> None:
    config = task(
        metric_list=[{"metric": "exact_match", "ignore_case": True}],
        filter_list=[
            {"name": "a", "filter": [{"function": "take_first"}]},
            {
                "name": "b",
                "filter": [{"function": "take_first"}],
                "metric_list": [{"metric": "bleu"}],
            },
        ],
    )
    first, second = config.pipelines()
    assert [m.name for m in first.metric_list] == ["exact_match"]
    assert first.metric_list[0].kwargs == {"ignore_case": True}
    assert [m.name for m in second.metric_list] == ["bleu"]
    assert first.metric_list is not config.metric_list


@pytest.mark.parametrize(
    ("output_type", "extra", "expected"),
    [
        ("generate_until", {}, ["exact_match"]),
        ("multiple_choice", {"doc_to_choice": ["a", "b"]}, ["acc", "acc_norm"]),
        ("loglikelihood", {}, ["perplexity", "acc"]),
        (
            "loglikelihood_rolling",
            {},
            ["word_perplexity", "byte_perplexity", "bits_per_byte"],
        ),
    ],
)
def test_metric_entries_default_per_output_type(
    output_type: str, extra: dict[str, Any], expected: list[str]
) -> None:
    config = task(output_type=output_type, **extra)
    assert [m.name for m in config.metric_entries()] == expected


def test_output_type_must_be_known() -> None:
    with pytest.raises(ValidationError, match="generate_until"):
        task(output_type="generate")


@pytest.mark.parametrize(
    ("data", "missing"),
    [
        ({"task": "t", "doc_to_target": "a"}, "doc_to_text"),
        ({"task": "t", "doc_to_text": "a"}, "doc_to_target"),
        (
            {"task": "t", "doc_to_text": "a", "doc_to_target": 0, "output_type": "multiple_choice"},
            "doc_to_choice",
        ),
    ],
)
def test_required_doc_to_fields(data: dict[str, Any], missing: str) -> None:
    with pytest.raises(ValidationError, match=f"'{missing}' is required"):
        TaskConfig.model_validate(data)


def test_rolling_loglikelihood_needs_no_doc_to_text() -> None:
    config = TaskConfig.model_validate(
        {"task": "t", "output_type": "loglikelihood_rolling", "doc_to_target": "page"}
    )
    assert config.doc_to_text is None


def test_repeats_and_num_fewshot_are_checked() -> None:
    with pytest.raises(ValidationError, match="repeats"):
        task(repeats=0)
    with pytest.raises(ValidationError, match="num_fewshot"):
        task(num_fewshot=-1)


def test_multimodal_and_promptsource_are_accepted_and_reported() -> None:
    config = task(doc_to_image="image", use_prompt="promptsource:GPT-3 style")
    unsupported = config.unsupported_features()
    assert any(u.startswith("doc_to_image") for u in unsupported)
    assert any(u.startswith("use_prompt") for u in unsupported)
    assert task().unsupported_features() == []


def test_fewshot_inherits_the_tasks_fields_unless_overridden() -> None:
    config = task(
        fewshot_split="train",
        target_delimiter=": ",
        fewshot_config={"sampler": "first_n", "doc_to_target": "{{long_answer}}"},
    )
    fs = config.fewshot()
    assert fs.sampler == "first_n"
    assert fs.split == "train"
    assert fs.doc_to_text == "{{q}}"
    assert fs.doc_to_target == "{{long_answer}}"
    assert fs.target_delimiter == ": "
    assert fs.fewshot_delimiter == "\n\n"
    assert task().fewshot() == FewshotConfig(
        doc_to_text="{{q}}",
        doc_to_target="{{a}}",
        target_delimiter=" ",
        fewshot_delimiter="\n\n",
    )


def test_fewshot_sampler_must_be_known() -> None:
    with pytest.raises(ValidationError, match="first_n"):
        task(fewshot_config={"sampler": "balanced"})


def test_tags_as_a_list() -> None:
    assert task(tag="glue").tags() == ["glue"]
    assert task(tag=["a", "b"]).tags() == ["a", "b"]
    assert task().tags() == []


def test_group_normalises_children_and_aggregates() -> None:
    group = GroupConfig.model_validate(
        {
            "group": "g",
            "task": [
                "a",
                {"task": "b", "doc_to_text": "x", "doc_to_target": "y"},
                {"group": "h", "task": "c"},
            ],
            "aggregate_metric_list": {"metric": "acc", "filter_list": "none"},
        }
    )
    assert group.task_names() == ["a", "b", "h"]
    assert isinstance(group.task[1], TaskConfig)
    assert isinstance(group.task[2], GroupConfig)
    (aggregate,) = group.aggregate_metric_list or []
    assert aggregate.aggregation == "mean"
    assert aggregate.weight_by_size is True
    assert aggregate.filter_list == ["none"]


def test_group_aggregation_other_than_mean_is_rejected() -> None:
    with pytest.raises(ValidationError, match="mean"):
        GroupConfig.model_validate(
            {
                "group": "g",
                "task": ["a"],
                "aggregate_metric_list": [{"metric": "acc", "aggregation": "median"}],
            }
        )


def test_group_needs_tasks() -> None:
    with pytest.raises(ValidationError, match="task"):
        GroupConfig.model_validate({"group": "g"})
