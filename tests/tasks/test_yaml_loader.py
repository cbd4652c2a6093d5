"""load_task_config / discover_tasks: real lm-eval YAMLs, includes, !function, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.tasks.config import GroupConfig, TaskConfig
from assay.tasks.errors import TaskConfigError
from assay.tasks.functions import FunctionRef
from assay.tasks.yaml_loader import discover_tasks, load_task_config
from tests.tasks.yaml_tree import TASK_FILES, build_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tasks")


def load_task(path: Path) -> TaskConfig:
    config = load_task_config(path)
    assert isinstance(config, TaskConfig)
    return config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


EXPECTED = {
    "arc_easy": ("multiple_choice", ["none"]),
    "cola": ("multiple_choice", ["none"]),
    "mrpc": ("multiple_choice", ["none"]),
    "gsm8k_cot_self_consistency": ("generate_until", ["score-first", "maj@64", "maj@8"]),
    "gsm8k_cot": ("generate_until", ["strict-match", "flexible-extract"]),
    "gsm8k": ("generate_until", ["strict-match", "flexible-extract"]),
    "lambada_openai": ("loglikelihood", ["none"]),
    "mmlu_flan_n_shot_generative_abstract_algebra": (
        "generate_until",
        ["strict-match", "flexible-extract"],
    ),
    "polemo2_in": ("generate_until", ["score-first"]),
    "sciq": ("multiple_choice", ["none"]),
    "wmt16-en-de": ("generate_until", ["none"]),
    "triviaqa": ("generate_until", ["remove_whitespace"]),
    "wikitext": ("loglikelihood_rolling", ["none"]),
}


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_every_fixture_yaml_loads(tree: Path, name: str) -> None:
    config = load_task(tree / TASK_FILES[name])
    output_type, pipelines = EXPECTED[name]
    assert config.task == name
    assert config.output_type == output_type
    assert [p.name for p in config.pipelines()] == pipelines
    assert config.source_path == tree / TASK_FILES[name]


def test_include_template_keys_are_inherited_and_own_keys_win(tree: Path) -> None:
    config = load_task(tree / TASK_FILES["mmlu_flan_n_shot_generative_abstract_algebra"])
    assert config.dataset_path == "cais/mmlu"  # from the template
    assert config.dataset_name == "abstract_algebra"  # own
    assert config.description.startswith("The following are multiple choice questions")
    assert config.fewshot_split == "dev"
    assert config.fewshot().sampler == "first_n"
    assert config.tags() == ["mmlu_flan_n_shot_generative_stem"]


def test_nested_include_overrides_filters_and_keeps_samples(tree: Path) -> None:
    config = load_task(tree / TASK_FILES["gsm8k_cot_self_consistency"])
    assert config.repeats == 64
    assert config.generation_kwargs == {
        "until": ["Q:", "\n\n"],
        "do_sample": True,
        "temperature": 0.2,
    }
    samples = config.fewshot().samples
    assert isinstance(samples, list) and len(samples) == 8  # from gsm8k-cot.yaml
    maj8 = config.pipelines()[2]
    assert maj8.steps[0] == ("take_first_k", {"k": 8})
    assert [m.kwargs for m in maj8.metric_list] == [
        {
            "ignore_case": True,
            "ignore_punctuation": False,
            "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"],
        }
    ]


def test_function_tag_imports_from_the_file_next_to_the_yaml(tree: Path) -> None:
    config = load_task(tree / TASK_FILES["wikitext"])
    assert callable(config.doc_to_target) and not isinstance(config.doc_to_target, FunctionRef)
    assert config.doc_to_target({"page": "a @-@ b , c"}) == "a-b, c"
    assert callable(config.process_results)
    result = config.process_results({"page": "one two"}, [-3.0])
    assert result["word_perplexity"] == (-3.0, 2)
    assert result["bits_per_byte"] == (-3.0, 7)


def test_function_tag_resolves_lazily_without_resolve(tree: Path) -> None:
    config = load_task_config(tree / TASK_FILES["wikitext"], resolve_functions=False)
    assert isinstance(config, TaskConfig)
    assert isinstance(config.process_results, FunctionRef)
    assert config.process_results({"page": "x"}, [-1.0])["byte_perplexity"] == (-1.0, 1)


def test_function_tag_falls_back_to_an_importable_module(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: !function json.dumps\n",
    )
    target = load_task(path).doc_to_target
    assert callable(target)
    assert target({"a": 1}) == '{"a": 1}'


def test_function_tag_with_a_package_path(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "helpers.py", "def target(doc):\n    return doc['a'].upper()\n")
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: !function lib.helpers.target\n",
    )
    target = load_task(path).doc_to_target
    assert callable(target)
    assert target({"a": "x"}) == "X"


def test_include_list_later_wins_and_own_keys_win_over_all(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "doc_to_text: A\ndoc_to_target: A\ndescription: from a\n")
    write(tmp_path / "b.yaml", "doc_to_target: B\n")
    path = write(tmp_path / "t.yaml", "include: [a.yaml, b.yaml]\ntask: t\ndescription: own\n")
    config = load_task(path)
    assert (config.doc_to_text, config.doc_to_target, config.description) == ("A", "B", "own")


def test_diamond_includes_are_not_cycles(tmp_path: Path) -> None:
    write(tmp_path / "base.yaml", "doc_to_text: q\ndoc_to_target: a\n")
    write(tmp_path / "left.yaml", "include: base.yaml\n")
    write(tmp_path / "right.yaml", "include: base.yaml\n")
    path = write(tmp_path / "t.yaml", "include: [left.yaml, right.yaml]\ntask: t\n")
    assert load_task(path).doc_to_text == "q"


# ------------------------------------------------------------------------------ errors
def error_of(path: Path) -> TaskConfigError:
    with pytest.raises(TaskConfigError) as info:
        load_task_config(path)
    return info.value


def test_unknown_key_names_file_key_and_suggestion(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml", "task: t\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshots: 3\n"
    )
    error = error_of(path)
    assert error.file == path
    assert error.key == "num_fewshots"
    assert "did you mean 'num_fewshot'?" in str(error)
    assert str(error).startswith(f"{path}: num_fewshots: unknown key")


def test_unknown_key_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    base = write(tmp_path / "base.yaml", "doc_to_text: q\ndoc_to_target: a\ntest_splt: test\n")
    path = write(tmp_path / "t.yaml", "include: base.yaml\ntask: t\n")
    error = error_of(path)
    assert error.file == base
    assert error.key == "test_splt"
    assert "did you mean 'test_split'?" in str(error)


def test_nested_unknown_key_has_its_key_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\n"
        "fewshot_config:\n  sampler: first_n\n  smaples: []\n",
    )
    error = error_of(path)
    assert error.key == "fewshot_config.smaples"
    assert "did you mean 'samples'?" in str(error)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nrepeats: zero\ngeneration_kwargs: [1]\n",
    )
    error = error_of(path)
    assert {issue.key for issue in error.issues} == {"repeats", "generation_kwargs"}


def test_missing_include_names_the_including_file(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "include: nowhere.yaml\ntask: t\n")
    error = error_of(path)
    assert error.file == path
    assert error.key == "include"
    assert "included file not found" in str(error)
    assert "nowhere.yaml" in str(error)


def test_include_cycle_is_detected(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "include: b.yaml\ndoc_to_text: q\n")
    write(tmp_path / "b.yaml", "include: a.yaml\ndoc_to_target: q\n")
    path = write(tmp_path / "t.yaml", "include: a.yaml\ntask: t\n")
    error = error_of(path)
    assert "include cycle" in str(error)
    assert error.key == "include"
    assert "a.yaml -> " in str(error) and "b.yaml" in str(error)


def test_bad_function_module_names_file_key_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nprocess_docs: !function nomod.process\n",
    )
    error = error_of(path)
    assert error.file == path
    assert error.key == "process_docs"
    assert "line 4" in str(error)
    assert "no file nomod.py next to the YAML" in str(error)


def test_bad_function_attribute(tmp_path: Path) -> None:
    write(tmp_path / "utils.py", "def process(docs):\n    return docs\n")
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\n"
        "metric_list:\n  - metric: acc\n    aggregation: !function utils.agg\n",
    )
    error = error_of(path)
    assert error.key == "metric_list[0].aggregation"
    assert "has no attribute 'agg'" in str(error)


def test_function_module_that_fails_to_import(tmp_path: Path) -> None:
    write(tmp_path / "broken.py", "raise RuntimeError('boom')\n")
    path = write(
        tmp_path / "t.yaml", "task: t\ndoc_to_text: q\ndoc_to_target: !function broken.fn\n"
    )
    error = error_of(path)
    assert error.key == "doc_to_target"
    assert "RuntimeError: boom" in str(error)


def test_unknown_filter_name_has_its_key_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nfilter_list:\n"
        "  - name: ok\n    filter:\n      - function: take_first\n"
        "  - name: bad\n    filter:\n      - function: regexx\n        regex_pattern: x\n",
    )
    error = error_of(path)
    assert error.key == "filter_list[1].filter[0].function"
    assert "regexx" in str(error)
    assert "regex" in str(error).split("regexx", 1)[1]  # a suggestion follows


def test_unknown_filter_kwarg_points_at_the_kwarg(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nfilter_list:\n"
        "  - name: x\n    filter:\n      - function: regex\n        regex_patern: x\n",
    )
    error = error_of(path)
    assert error.key == "filter_list[0].filter[0].regex_patern"


def test_unknown_metric_and_aggregation(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nmetric_list:\n"
        "  - metric: exact_mach\n  - metric: acc\n    aggregation: meen\n",
    )
    error = error_of(path)
    messages = {issue.key: issue.message for issue in error.issues}
    assert "unknown metric 'exact_mach'" in messages["metric_list[0].metric"]
    assert "'exact_match'" in messages["metric_list[0].metric"]
    assert "unknown aggregation 'meen'" in messages["metric_list[1].aggregation"]
    assert all(issue.file == path for issue in error.issues)


def test_unknown_metric_in_a_pipeline_metric_list(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nfilter_list:\n"
        "  - name: x\n    filter: [{function: take_first}]\n    metric_list: [{metric: nope}]\n",
    )
    assert error_of(path).key == "filter_list[0].metric_list[0].metric"


def test_metric_names_are_free_with_process_results_or_hf_evaluate(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nprocess_results: !function json.dumps\n"
        "metric_list: [{metric: my_own_number, aggregation: mean}]\n",
    )
    assert load_task(path).metric_entries()[0].name == "my_own_number"
    path = write(
        tmp_path / "u.yaml",
        "task: u\ndoc_to_text: q\ndoc_to_target: a\n"
        "metric_list: [{metric: accuracy, hf_evaluate: true}]\n",
    )
    assert load_task(path).metric_entries()[0].hf_evaluate is True


def test_an_assay_scorer_type_is_a_valid_metric(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nmetric_list: [{metric: content-similarity}]\n",
    )
    assert load_task(path).metric_entries()[0].name == "content-similarity"


def test_missing_required_field(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "task: t\ndoc_to_text: q\n")
    error = error_of(path)
    assert error.file == path
    assert "'doc_to_target' is required" in str(error)


def test_template_without_task_is_reported_as_such(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "doc_to_text: q\ndoc_to_target: a\n")
    error = error_of(path)
    assert error.key == "task"
    assert "template" in str(error)


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "task: t\ndoc_to_text: [unclosed\n")
    error = error_of(path)
    assert error.file == path
    assert "line 3" in str(error) or "line 2" in str(error)
    assert "invalid YAML" in str(error)


def test_unknown_yaml_tag_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "task: t\ndoc_to_text: !python/name:os.system q\n")
    assert "invalid YAML" in str(error_of(path))


def test_a_file_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml", "- a\n- b\n")
    assert "must be a mapping" in str(error_of(path))


def test_missing_file(tmp_path: Path) -> None:
    error = error_of(tmp_path / "absent.yaml")
    assert "no such file" in str(error)


def test_group_with_task_keys_carries_them_as_overrides(tmp_path: Path) -> None:
    """lm-eval 0.4.13: a file with ``group`` is a group; its task keys override its
    children's (see ``operations.tasks.group_leaves``)."""
    path = write(tmp_path / "t.yaml", "group: g\ntask: t\ndoc_to_text: q\ndoc_to_target: a\n")
    config = load_task_config(path)
    assert isinstance(config, GroupConfig) and config.task_names() == ["t"]
    assert config.task_overrides == {"doc_to_text": "q", "doc_to_target": "a"}


def test_group_config_loads_with_inline_task_errors_located(tmp_path: Path) -> None:
    path = write(
        tmp_path / "g.yaml",
        "group: g\ntask:\n  - arc_easy\n  - task: inline\n    doc_to_text: q\n"
        "    doc_to_target: a\n    metric_list: [{metric: acc}]\n"
        "aggregate_metric_list:\n  - metric: acc\n    weight_by_size: false\n",
    )
    group = load_task_config(path)
    assert isinstance(group, GroupConfig)
    assert group.task_names() == ["arc_easy", "inline"]
    bad = write(
        tmp_path / "h.yaml",
        "group: h\ntask:\n  - task: inline\n    doc_to_text: q\n    doc_to_target: a\n"
        "    metric_list: [{metric: acc_nrom}]\n",
    )
    error = error_of(bad)
    assert error.key == "task[0].metric_list[0].metric"
    unknown = write(tmp_path / "k.yaml", "group: k\ntask: [a]\nagregate_metric_list: []\n")
    assert "did you mean 'aggregate_metric_list'" in str(error_of(unknown))


# ------------------------------------------------------------------------------ discovery
def test_discover_lists_tasks_skips_templates_and_lists_broken_files(tree: Path) -> None:
    write(tree / "broken" / "bad.yaml", "task: bad\ndoc_to_text: q\ndoc_to_target: a\nfoo: 1\n")
    write(
        tree / "groups" / "g.yaml",
        "group: stem_group\ntask: [arc_easy, mmlu_flan_n_shot_generative_stem]\n",
    )
    # a !function that would fail to import is not executed while listing
    write(
        tree / "lazy" / "lazy.yaml",
        "task: lazy\ndoc_to_text: q\ndoc_to_target: !function missing_module.fn\n",
    )
    entries = discover_tasks(tree)
    by_name = {e.name: e for e in entries}
    assert set(TASK_FILES) <= set(by_name)
    assert "gsm8k-cot.yaml" not in [e.file.name for e in entries if e.name is None]
    arc = by_name["arc_easy"]
    assert arc.kind == "task" and arc.output_type == "multiple_choice"
    assert arc.tags == ("ai2_arc",)
    assert arc.groups == ("stem_group",)
    assert by_name["mmlu_flan_n_shot_generative_abstract_algebra"].groups == ("stem_group",)
    assert by_name["stem_group"].kind == "group"
    assert by_name["bad"].error is not None and "unknown key 'foo'" in by_name["bad"].error
    assert by_name["lazy"].error is None
    assert all(e.error is None for e in entries if e.name != "bad")
    # the template without task: is not listed
    assert not any(e.file.name == "_mmlu_flan_generative_template_yaml" for e in entries)
    assert not any(e.file.name == "wmt_common_yaml" for e in entries)


def test_discover_an_unreadable_yaml(tmp_path: Path) -> None:
    write(tmp_path / "x.yaml", "task: [\n")
    (entry,) = discover_tasks(tmp_path)
    assert entry.name is None and entry.error is not None


def test_discover_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(TaskConfigError, match="not a directory"):
        discover_tasks(tmp_path / "nope")


def test_a_key_given_twice_is_reported_and_the_last_one_wins(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """lm-eval keeps the last value silently, and real task YAMLs rely on it; assay keeps
    it too, with a warning naming the file, line and key."""
    path = write(tmp_path / "t.yaml", "task: t\ndoc_to_text: q\ndoc_to_target: a\ntask: u\n")
    with caplog.at_level("WARNING"):
        config = load_task_config(path)
    assert isinstance(config, TaskConfig) and config.task == "u"
    assert "t.yaml: line 4: key 'task' appears twice" in caplog.text


def test_non_strict_loading_drops_unknown_keys_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshots: 3\n"
        "fewshot_config: {sampler: first_n, smaples: []}\n",
    )
    with caplog.at_level("WARNING"):
        config = load_task_config(path, strict=False)
    assert isinstance(config, TaskConfig)
    assert config.num_fewshot is None
    assert config.fewshot().sampler == "first_n"
    assert "unknown key 'num_fewshots' in TaskConfig ignored (did you mean 'num_fewshot'?)" in (
        caplog.text
    )
    assert "unknown key 'smaples' in FewshotConfig ignored" in caplog.text
    with pytest.raises(TaskConfigError):
        load_task_config(path)  # strict by default


def test_task_local_filters_by_function(tmp_path: Path) -> None:
    write(
        tmp_path / "utils.py",
        "class Upper:\n"
        "    def __init__(self, suffix=''):\n"
        "        self.suffix = suffix\n"
        "    def apply(self, resps, docs):\n"
        "        return [[r.upper() + self.suffix for r in rs] for rs in resps]\n"
        "\n"
        "def shout(resps, docs):\n"
        "    return [[r + '!' for r in rs] for rs in resps]\n",
    )
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndoc_to_text: q\ndoc_to_target: a\nfilter_list:\n"
        "  - name: own\n    filter:\n      - function: !function utils.Upper\n        suffix: '?'\n"
        "      - function: custom\n        filter_fn: !function utils.shout\n"
        "      - function: take_first\n",
    )
    (pipeline,) = load_task(path).pipelines()
    (upper, upper_kwargs), (custom, custom_kwargs), _ = pipeline.steps
    assert callable(upper) and upper_kwargs == {"suffix": "?"}
    assert upper(**upper_kwargs).apply([["a"]], [{}]) == [["A?"]]
    assert custom == "custom"
    assert custom_kwargs["filter_fn"]([["a"]], [{}]) == [["a!"]]
    # a class that does not take the kwarg is reported at load time
    bad = write(
        tmp_path / "u.yaml",
        "task: u\ndoc_to_text: q\ndoc_to_target: a\nfilter_list:\n"
        "  - name: own\n    filter:\n      - function: !function utils.Upper\n        size: 3\n",
    )
    error = error_of(bad)
    assert error.key is not None and error.key.startswith("filter_list[0].filter[0]")
    assert "size" in str(error)


def test_unknown_reduction_names_the_key_with_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "task: t\ndataset_path: x.jsonl\ndoc_to_text: q\ndoc_to_target: a\n"
        "metric_list:\n  - metric: exact_match\n    reduction: pas@k\n",
        encoding="utf-8",
    )
    with pytest.raises(TaskConfigError, match=r"metric_list\[0\]\.reduction.*'pass@k'"):
        load_task_config(path)
    path.write_text(path.read_text().replace("pas@k", "majority"), encoding="utf-8")
    assert isinstance(load_task_config(path), TaskConfig)
