"""The prompt pieces: Jinja rendering, the doc_to_* forms and literal-eval rules, samplers."""

from __future__ import annotations

import random

import pytest

from assay.tasks.errors import TaskDocsError
from assay.tasks.prompts import (
    choices_of,
    maybe_delimit,
    render,
    requires_delimiter,
    sample_fewshot,
    target_of,
    text_of,
)

DOC = {"question": "Q?", "answer": "#### 42", "label": 1, "opts": ["a", "b"]}
FEATURES = frozenset(DOC)


def test_render_is_strict_and_has_regex_replace() -> None:
    assert render("{{question}} {{answer | regex_replace('#+ ', '')}}", DOC) == "Q? 42"
    assert render("x\n", DOC) == "x\n"  # trailing newline kept
    with pytest.raises(TaskDocsError, match="'missing' is undefined") as info:
        render("{{missing}}", DOC, key="doc_to_text")
    assert info.value.key == "doc_to_text"
    with pytest.raises(TaskDocsError, match="invalid Jinja template"):
        render("{{ unclosed", DOC)


def test_a_field_name_returns_the_value_as_is() -> None:
    assert text_of("label", DOC, features=FEATURES, has_choices=False) == 1
    assert target_of("opts", DOC, features=FEATURES, has_choices=False) == ["a", "b"]


def test_all_digit_target_is_an_int_only_with_choices() -> None:
    assert target_of("{{label}}", DOC, features=FEATURES, has_choices=True) == 1
    assert target_of("{{label}}", DOC, features=FEATURES, has_choices=False) == "1"
    assert text_of("{{label}}", DOC, features=FEATURES, has_choices=True) == 1
    assert text_of("{{label}}", DOC, features=FEATURES, has_choices=False) == "1"


def test_bracketed_target_is_a_list_if_it_parses() -> None:
    assert target_of("{{opts}}", DOC, features=FEATURES, has_choices=False) == ["a", "b"]
    assert target_of("[not python", DOC, features=FEATURES, has_choices=False) == "[not python"
    assert target_of("[x]", DOC, features=FEATURES, has_choices=False) == "[x]"


def test_literal_and_callable_forms() -> None:
    assert target_of(3, DOC, features=FEATURES, has_choices=True) == 3
    assert target_of(["p", "q"], DOC, features=FEATURES, has_choices=False) == ["p", "q"]
    assert target_of(lambda d: d["answer"][-2:], DOC, features=FEATURES, has_choices=False) == "42"


def test_choices_forms() -> None:
    assert choices_of("opts", DOC, features=FEATURES) == ["a", "b"]
    assert choices_of("{{opts + ['c']}}", DOC, features=FEATURES) == ["a", "b", "c"]
    assert choices_of(["no", "yes"], DOC, features=FEATURES) == ["no", "yes"]
    assert choices_of({"A": "first", "B": "second"}, DOC, features=FEATURES) == ["first", "second"]
    assert choices_of(lambda d: ("x", "y"), DOC, features=FEATURES) == ["x", "y"]
    with pytest.raises(TaskDocsError, match="not a Python literal list"):
        choices_of("{{question}}", DOC, features=FEATURES)
    with pytest.raises(TaskDocsError, match="must be a list"):
        choices_of("{{label}}", DOC, features=FEATURES)


def test_callable_that_raises_is_reported_with_its_key() -> None:
    def broken(doc: object) -> str:
        raise ValueError("bad doc")

    with pytest.raises(TaskDocsError, match="ValueError: bad doc") as info:
        text_of(broken, DOC, features=FEATURES, has_choices=False)
    assert info.value.key == "doc_to_text"


def test_delimiters() -> None:
    assert maybe_delimit("Answer:", "yes") == "Answer: yes"
    assert maybe_delimit("Answer: ", "yes") == "Answer: yes"
    assert maybe_delimit(None, "yes") == "yes"
    assert maybe_delimit("Answer:", "") == "Answer:"
    assert requires_delimiter("Q:", "A") is True
    assert requires_delimiter("Q:\n", "A") is False
    assert requires_delimiter("", "A") is False


POOL = [{"i": i} for i in range(5)]


def test_default_sampler_is_random_sample_with_the_seed() -> None:
    expected = random.Random(1234).sample(POOL, 2)
    got = sample_fewshot(POOL, 2, sampler="default", rng=random.Random(1234), eval_doc=None)
    assert got == expected == [{"i": 3}, {"i": 0}]


def test_default_sampler_draws_one_more_and_drops_the_eval_doc() -> None:
    # Random(1234).sample(range(5), 3) is [3, 0, 4]: doc 0 is dropped, [3, 4] kept
    got = sample_fewshot(POOL, 2, sampler="default", rng=random.Random(1234), eval_doc={"i": 0})
    assert got == [{"i": 3}, {"i": 4}]
    # when the eval doc is not drawn the first n of the n + 1 are kept
    got = sample_fewshot(POOL, 2, sampler="default", rng=random.Random(1234), eval_doc={"i": 1})
    assert got == [{"i": 3}, {"i": 0}]


def test_first_n_sampler_skips_the_eval_doc() -> None:
    rng = random.Random(0)
    assert sample_fewshot(POOL, 2, sampler="first_n", rng=rng, eval_doc=None) == POOL[:2]
    assert sample_fewshot(POOL, 2, sampler="first_n", rng=rng, eval_doc=POOL[0]) == POOL[1:3]
    with pytest.raises(TaskDocsError, match="only 4 are available"):
        sample_fewshot(POOL, 5, sampler="first_n", rng=rng, eval_doc=POOL[0])


def test_sampler_limits() -> None:
    rng = random.Random(0)
    assert sample_fewshot(POOL, 0, sampler="default", rng=rng, eval_doc=None) == []
    with pytest.raises(TaskDocsError, match="only 5 docs"):
        sample_fewshot(POOL, 5, sampler="default", rng=rng, eval_doc=POOL[0])
    with pytest.raises(TaskDocsError, match="no few-shot docs"):
        sample_fewshot([], 1, sampler="default", rng=rng, eval_doc=None)
