"""Task: targets, choices and gold of real configs; contexts with few-shot; requests."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from assay.tasks.config import TaskConfig
from assay.tasks.errors import TaskConfigError, TaskDocsError
from assay.tasks.task import Task
from assay.tasks.yaml_loader import load_task_config
from tests.tasks.yaml_tree import TASK_FILES, build_tree, compat_cases


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("lmeval") / "tasks")


def fixture_task(tree: Path, name: str, docs: list[dict[str, Any]]) -> Task:
    config = load_task_config(tree / TASK_FILES[name])
    assert isinstance(config, TaskConfig)
    return Task(config, docs=docs)


CASES = {case["label"].split("(")[0]: case for case in compat_cases()}

# What lm-eval's doc_to_target / doc_to_choice / gold give for the synthetic compat docs,
# worked out by hand from each YAML.
TARGETS: dict[str, list[Any]] = {
    "gsm8k": ["Natalia sold 48/2 = 24 clips.\n#### 72", "... \n#### 1,000", "... \n#### 5"],
    "gsm8k_cot_self_consistency": ["6", "9"],
    "triviaqa": [["Paris", "Paris, France"], ["Jupiter"], ["Water"]],
    "mmlu_flan_generative": ["(B)"] * 4,
    "polemo2_in": ["2"] * 3,
    "wmt16-en-de": [" Die Katze saß auf der Matte.", " Es ist ein schöner Tag."],
    "arc_easy": [0, 2],
    "cola": [1, 0, 1, 0],
    "mrpc": [1, 1, 0, 0],
    "lambada_openai": [" mat", " world"],
}
CHOICES: dict[str, list[list[str]]] = {
    "arc_easy": [["a long answer", "b"], ["x", "yy", "zzz"]],
    "cola": [["no", "yes"]] * 4,
    "mrpc": [["no", "yes"]] * 4,
}


def test_compat_fixture_covers_the_ten_configs() -> None:
    assert sorted(CASES) == sorted(TARGETS)


@pytest.mark.parametrize("label", sorted(TARGETS))
def test_compat_docs_give_lm_evals_targets_choices_and_gold(tree: Path, label: str) -> None:
    case = CASES[label]
    task = fixture_task(tree, case["yaml"], case["docs"])
    docs = task.eval_docs()
    assert [task.doc_to_target(doc) for doc in docs] == TARGETS[label]
    assert task.multiple_target is (label == "triviaqa")
    if label in CHOICES:
        assert [task.doc_to_choice(doc) for doc in docs] == CHOICES[label]
        assert [task.gold(doc) for doc in docs] == TARGETS[label]
        assert task.continuations(docs[0]) == [" " + c for c in CHOICES[label][0]]


def test_generation_reference_is_the_list_of_aliases_for_triviaqa(tree: Path) -> None:
    case = CASES["triviaqa"]
    task = fixture_task(tree, "triviaqa", case["docs"])
    assert task.generation_reference(task.eval_docs()[0]) == ["Paris", "Paris, France"]


def test_compat_contexts(tree: Path) -> None:
    arc = fixture_task(tree, "arc_easy", CASES["arc_easy"]["docs"])
    assert arc.context(arc.eval_docs()[0]) == "Question: q\nAnswer:"
    mmlu = fixture_task(
        tree, "mmlu_flan_n_shot_generative_abstract_algebra", CASES["mmlu_flan_generative"]["docs"]
    )
    assert mmlu.context(mmlu.eval_docs()[0]) == (
        "The following are multiple choice questions (with answers) about abstract algebra."
        "\n\nQ: Q\n(A) alpha (B) beta (C) gamma (D) delta\nA:"
    )
    lambada = fixture_task(tree, "lambada_openai", CASES["lambada_openai"]["docs"])
    doc = lambada.eval_docs()[0]
    assert lambada.context(doc) == "the cat sat on the"
    assert lambada.continuations(doc) == [" mat"]  # no target_delimiter for loglikelihood


def test_sciq_constant_target_and_template_choices(tree: Path) -> None:
    doc = {
        "support": "  Plants need light. ",
        "question": "What do plants need?",
        "distractor1": "salt",
        "distractor2": "iron",
        "distractor3": "sand",
        "correct_answer": "light",
    }
    task = fixture_task(tree, "sciq", [doc])
    assert task.doc_to_choice(doc) == ["salt", "iron", "sand", "light"]
    assert task.gold(doc) == 3
    assert task.context(doc) == "Plants need light. \nQuestion: What do plants need?\nAnswer:"


def test_inline_samples_first_n_gsm8k_cot(tree: Path) -> None:
    task = fixture_task(tree, "gsm8k_cot", [{"question": "a", "answer": "#### 6"}])
    assert task.resolve_num_fewshot() == 8
    assert task.context(task.eval_docs()[0], num_fewshot=1) == (
        "Q: There are 15 trees in the grove. Grove workers will plant trees in the grove "
        "today. After they are done, there will be 21 trees. How many trees did the grove "
        "workers plant today?\nA: There are 15 trees originally. Then there were 21 trees "
        "after some more were planted. So there must have been 21 - 15 = 6. The answer is 6."
        "\n\nQ: a\nA:"
    )
    full = task.context(task.eval_docs()[0])
    assert isinstance(full, str)
    assert full.count("\n\nQ: ") == 8 and full.endswith("The answer is 8.\n\nQ: a\nA:")


def test_wikitext_rolling_text_from_function(tree: Path) -> None:
    task = fixture_task(tree, "wikitext", [{"page": "a @-@ b , c"}])
    assert task.rolling_text(task.eval_docs()[0]) == "a-b, c"


# ------------------------------------------------------------------ few-shot on a local set
TRAIN = [{"q": f"q{i}", "a": f"a{i}"} for i in range(5)]
TEST = [{"q": "t0", "a": "b0"}, {"q": "t1", "a": "b1"}]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def local_task(
    tmp_path: Path, extra: str = "", test: list[dict[str, Any]] = TEST, fewshot_split: str = "train"
) -> Task:
    write_jsonl(tmp_path / "data" / "train.jsonl", TRAIN)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    path = tmp_path / "quiz.yaml"
    path.write_text(
        f"task: quiz\ndataset_path: data\ntest_split: test\nfewshot_split: {fewshot_split}\n"
        'description: "Quiz.\\n\\n"\ndoc_to_text: "Q: {{q}}\\nA:"\ndoc_to_target: "{{a}}"\n'
        "num_fewshot: 2\n" + extra,
        encoding="utf-8",
    )
    config = load_task_config(path)
    assert isinstance(config, TaskConfig)
    return Task(config)


def test_default_sampler_contexts_share_one_seeded_generator(tmp_path: Path) -> None:
    task = local_task(tmp_path)
    contexts = task.contexts()
    # random.Random(1234): sample(range(5), 2) → [3, 0], then [0, 4]
    assert [c.context for c in contexts] == [
        "Quiz.\n\nQ: q3\nA: a3\n\nQ: q0\nA: a0\n\nQ: t0\nA:",
        "Quiz.\n\nQ: q0\nA: a0\n\nQ: q4\nA: a4\n\nQ: t1\nA:",
    ]
    assert [c.doc_id for c in contexts] == [0, 1]
    # alone, a doc gets the examples of a fresh generator
    assert task.context(TEST[1]) == "Quiz.\n\nQ: q3\nA: a3\n\nQ: q0\nA: a0\n\nQ: t1\nA:"
    # another seed gives other examples: random.Random(7).sample(range(5), 2) → [2, 1]
    assert task.context(TEST[0], rng_seed=7) == "Quiz.\n\nQ: q2\nA: a2\n\nQ: q1\nA: a1\n\nQ: t0\nA:"
    assert [c.context for c in task.contexts(limit=1)] == [contexts[0].context]


def test_first_n_sampler(tmp_path: Path) -> None:
    task = local_task(tmp_path, "fewshot_config:\n  sampler: first_n\n")
    assert [c.context for c in task.contexts()] == [
        "Quiz.\n\nQ: q0\nA: a0\n\nQ: q1\nA: a1\n\nQ: t0\nA:",
        "Quiz.\n\nQ: q0\nA: a0\n\nQ: q1\nA: a1\n\nQ: t1\nA:",
    ]


def test_same_split_examples_leave_out_the_evaluated_doc(tmp_path: Path) -> None:
    docs = [{"q": f"d{i}", "a": f"e{i}"} for i in range(4)]
    task = local_task(tmp_path, test=docs, fewshot_split="test")
    # Random(1234): sample(range(4), 3) → [3, 0, 2] (d0 dropped), then [0, 2, 3]
    assert [c.context for c in task.contexts(limit=2)] == [
        "Quiz.\n\nQ: d3\nA: e3\n\nQ: d2\nA: e2\n\nQ: d0\nA:",
        "Quiz.\n\nQ: d0\nA: e0\n\nQ: d2\nA: e2\n\nQ: d1\nA:",
    ]
    first_n = local_task(
        tmp_path, "fewshot_config: {sampler: first_n}\n", test=docs, fewshot_split="test"
    )
    assert [c.context for c in first_n.contexts(limit=2)] == [
        "Quiz.\n\nQ: d1\nA: e1\n\nQ: d2\nA: e2\n\nQ: d0\nA:",
        "Quiz.\n\nQ: d0\nA: e0\n\nQ: d2\nA: e2\n\nQ: d1\nA:",
    ]


def test_fewshot_overrides_indices_and_delimiters(tmp_path: Path) -> None:
    task = local_task(
        tmp_path,
        "fewshot_config:\n  sampler: first_n\n  fewshot_indices: [4, 2]\n"
        "  doc_to_target: '{{a}}!'\n  fewshot_delimiter: ' | '\n  target_delimiter: ' -> '\n",
    )
    assert task.context(TEST[0]) == "Quiz.\n\nQ: q4\nA: -> a4! | Q: q2\nA: -> a2! | Q: t0\nA:"
    bad = local_task(tmp_path, "fewshot_config:\n  sampler: first_n\n  fewshot_indices: [9]\n")
    with pytest.raises(TaskDocsError, match=r"indices \[9\] are out of range"):
        bad.context(TEST[0])


def test_gen_prefix_joins_with_a_space(tmp_path: Path) -> None:
    task = local_task(
        tmp_path,
        "gen_prefix: 'Answer:'\nfewshot_config: {sampler: first_n}\n",
    )
    # doc_to_text ends with "A:" so a space is needed before the prefix
    assert task.context(TEST[0], num_fewshot=1) == (
        "Quiz.\n\nQ: q0\nA: Answer: a0\n\nQ: t0\nA: Answer:"
    )


def test_num_fewshot_precedence(tmp_path: Path) -> None:
    task = local_task(tmp_path)
    assert task.resolve_num_fewshot(None) == 2
    assert task.resolve_num_fewshot(4) == 4
    yaml_zero = Task(
        TaskConfig(task="t", doc_to_text="q", doc_to_target="a", num_fewshot=0), docs=TEST
    )
    assert yaml_zero.resolve_num_fewshot(3) == 0  # the YAML's 0 is never overridden
    unset = Task(TaskConfig(task="t", doc_to_text="q", doc_to_target="a"), docs=TEST)
    assert unset.resolve_num_fewshot(None) == 0
    assert unset.resolve_num_fewshot(1) == 1
    with pytest.raises(TaskDocsError, match="num_fewshot must be >= 0"):
        unset.resolve_num_fewshot(-1)


# ------------------------------------------------------------------ gold and choices
def mc_task(doc_to_target: Any, docs: list[dict[str, Any]]) -> Task:
    config = TaskConfig(
        task="mc",
        output_type="multiple_choice",
        doc_to_text="{{q}}",
        doc_to_target=doc_to_target,
        doc_to_choice=["red", "green", "blue"],
    )
    return Task(config, docs=docs)


def test_gold_from_a_choice_string_a_list_and_out_of_range(
    caplog: pytest.LogCaptureFixture,
) -> None:
    docs = [{"q": "x", "a": "green", "many": [0, 2], "bad": 7}]
    assert mc_task("a", docs).gold(docs[0]) == 1
    listed = mc_task("many", docs)
    assert listed.multiple_target is True
    assert listed.gold(docs[0]) == [0, 2]
    with caplog.at_level(logging.WARNING):
        assert mc_task("bad", docs).gold(docs[0]) == -100
    assert "not among the choices" in caplog.text
    assert mc_task("{{'purple'}}", docs).gold(docs[0]) == -100


def test_multiple_input_task(tmp_path: Path) -> None:
    docs = [
        {"sentence": "The _ is red", "option1": "apple", "option2": "sky", "answer": "1"},
        {"sentence": "The _ is blue", "option1": "apple", "option2": "sky", "answer": "2"},
    ]

    def gold(doc: dict[str, Any]) -> int:
        return int(doc["answer"]) - 1

    def partial_contexts(doc: dict[str, Any]) -> list[str]:
        head = doc["sentence"].split("_")[0]
        return [head + doc["option1"], head + doc["option2"]]

    def partial_target(doc: dict[str, Any]) -> str:
        return str(doc["sentence"]).split("_")[1].strip()

    config = TaskConfig(
        task="wino",
        output_type="multiple_choice",
        doc_to_text=gold,
        doc_to_target=partial_target,
        doc_to_choice=partial_contexts,
        fewshot_config={"sampler": "first_n"},
    )
    task = Task(config, docs=docs, fewshot_docs=docs[1:])
    assert task.multiple_input == 2
    assert task.gold(docs[0]) == 0
    assert task.context(docs[0]) == ["The apple", "The sky"]
    assert task.continuations(docs[0]) == [" is red", " is red"]
    assert task.context(docs[0], num_fewshot=1) == [
        "The sky is blue\n\nThe apple",
        "The sky is blue\n\nThe sky",
    ]


# ------------------------------------------------------------------ requests
def gen_task(**kwargs: Any) -> Task:
    return Task(TaskConfig(task="g", doc_to_text="q", doc_to_target="a", **kwargs), docs=TEST)


def test_generation_settings() -> None:
    assert gen_task().generation_settings() == {
        "temperature": 0.0,
        "do_sample": False,
        "max_gen_toks": 256,
        "until": ["\n\n"],
    }
    settings = gen_task(
        fewshot_delimiter="\n###\n", generation_kwargs={"temperature": 1, "top_p": 0.9}
    ).generation_settings()
    assert settings == {"temperature": 1.0, "top_p": 0.9, "until": ["\n###\n"], "max_gen_toks": 256}
    assert isinstance(settings["temperature"], float)
    settings = gen_task(generation_kwargs={"until": "Q:", "max_gen_toks": 50}).generation_settings()
    assert settings == {"until": ["Q:"], "max_gen_toks": 50}
    with pytest.raises(TaskDocsError, match="temperature must be a number"):
        gen_task(generation_kwargs={"temperature": "hot"}).generation_settings()


def test_unconditional_continuations_for_mutual_info() -> None:
    task = mc_task("a", [{"q": "x", "a": "red"}])
    assert task.unconditional_continuations({"q": "x"}) == [" red", " green", " blue"]


def test_continuations_need_a_loglikelihood_task() -> None:
    with pytest.raises(TaskDocsError, match="continuations apply to"):
        gen_task().continuations(TEST[0])


def test_unsupported_features_refuse_to_build_a_task() -> None:
    config = TaskConfig(task="v", doc_to_text="q", doc_to_target="a", doc_to_image="img")
    with pytest.raises(TaskConfigError, match="multimodal"):
        Task(config, docs=TEST)


def test_prompt_errors_name_the_file_and_key(tmp_path: Path) -> None:
    task = local_task(tmp_path, "doc_to_choice: '{{missing}}'\noutput_type: multiple_choice\n")
    with pytest.raises(TaskDocsError) as info:
        task.doc_to_choice(TEST[0])
    assert info.value.key == "doc_to_choice"
    assert info.value.file == tmp_path / "quiz.yaml"
    assert "'missing' is undefined" in str(info.value)


def test_decontamination_query(tree: Path) -> None:
    task = fixture_task(tree, "cola", CASES["cola"]["docs"])
    assert task.decontamination_query(task.eval_docs()[0]) == "s"
