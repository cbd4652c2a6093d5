"""Fingerprints change exactly when answers can change (code, constants, closures, prompts)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

import assay
from assay.fingerprint import code_fingerprint
from assay.scoring.context import StepContext

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str, source: str) -> types.ModuleType:
    """A real module object (own globals) built from ``source``, as a user's file would be."""
    module = types.ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


def _concise(limit_literal: int) -> assay.Scorer:
    source = f"def score(ctx):\n    return 1.0 if len(ctx.output_text) < {limit_literal} else 0.0\n"
    step = _module("user_steps", source).score
    return assay.Scorer("concise").score(step)


def test_a_changed_constant_in_a_code_step_changes_the_fingerprint() -> None:
    assert _concise(200).fingerprint == _concise(200).fingerprint
    assert _concise(200).fingerprint != _concise(50).fingerprint


def test_closure_values_and_defaults_are_covered() -> None:
    def make(limit: int) -> assay.Scorer:
        return assay.Scorer("concise").score(lambda ctx: float(len(ctx.output_text) < limit))

    def with_default(limit: int) -> assay.Scorer:
        def step(ctx: StepContext, limit: int = limit) -> float:
            return float(len(ctx.output_text) < limit)

        return assay.Scorer("concise").score(step)

    assert make(200).fingerprint == make(200).fingerprint
    assert make(200).fingerprint != make(50).fingerprint
    assert with_default(200).fingerprint != with_default(50).fingerprint


def test_helpers_called_by_a_step_are_followed_recursively() -> None:
    template = """
LIMIT = {limit}

def _inner(n):
    return n < LIMIT

def _outer(text):
    return _inner(len(text))

def score(ctx):
    return float(_outer(ctx.output_text))
"""
    a = _module("user_helpers", template.format(limit=200)).score
    b = _module("user_helpers", template.format(limit=50)).score
    assert code_fingerprint(a) == code_fingerprint(
        _module("user_helpers", template.format(limit=200)).score
    )
    assert code_fingerprint(a) != code_fingerprint(b)


def test_nested_function_constants_are_covered() -> None:
    def make(word: str) -> types.FunctionType:
        source = f"def score(ctx):\n    def inner():\n        return {word!r}\n    return inner()\n"
        fn: types.FunctionType = _module("user_nested", source).score
        return fn

    assert code_fingerprint(make("yes")) != code_fingerprint(make("no"))


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


class LooseVerdict(BaseModel):
    verdict: Literal["yes", "no", "unsure"]


def _judge(prompt_text: str, output: type[BaseModel] = Verdict) -> assay.Scorer:
    judge = assay.JudgeConfig(model=assay.ScriptedModel(script=[]), instructions="Judge.")
    source = f"def prompt(ctx):\n    return {prompt_text!r} + ctx.output_text\n"
    builder = _module("user_prompts", source).prompt
    return (
        assay.Scorer("judge", judge=judge)
        .analyze(assay.judge_step(builder, output))
        .score(lambda ctx: 1.0 if ctx.analyze_result.verdict == "yes" else 0.0)
    )


def test_rewriting_a_judge_prompt_or_its_output_model_changes_the_fingerprint() -> None:
    base = _judge("Is this polite? ")
    assert base.fingerprint == _judge("Is this polite? ").fingerprint
    assert base.fingerprint != _judge("Is this rude? ").fingerprint
    assert base.fingerprint != _judge("Is this polite? ", LooseVerdict).fingerprint
    parts = base.fingerprint_parts()
    changed = _judge("Is this rude? ").fingerprint_parts()
    assert [k for k in parts if parts[k] != changed[k]] == ["analyze step"]


def test_judge_model_instructions_and_settings_are_covered() -> None:
    base = _judge("Q? ")
    other_model = base.with_judge_model(assay.ScriptedModel(script=[], name="other"))
    assert base.fingerprint != other_model.fingerprint
    assert (
        base.fingerprint
        != base.with_options(
            judge=assay.JudgeConfig(model=assay.ScriptedModel(script=[]), instructions="Judge!")
        ).fingerprint
    )


def test_registered_scorer_params_and_builtin_prompts_are_covered() -> None:
    a = assay.create_scorer("faithfulness", model="openai/gpt-4o-mini")
    assert (
        a.fingerprint == assay.create_scorer("faithfulness", model="openai/gpt-4o-mini").fingerprint
    )
    assert a.fingerprint != assay.create_scorer("faithfulness", model="openai/gpt-4o").fingerprint
    assert (
        a.fingerprint
        != assay.create_scorer("faithfulness", model="openai/gpt-4o-mini", scale=10).fingerprint
    )
    assert set(a.fingerprint_parts()) >= {
        "type",
        "params",
        "preprocess step",
        "analyze step",
        "score step",
    }


def test_the_fingerprint_is_the_same_in_another_process() -> None:
    code = (
        "import assay;"
        "print(assay.create_scorer('faithfulness', model='openai/gpt-4o-mini').fingerprint);"
        "print(assay.create_scorer('keyword-coverage').fingerprint)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    here = (
        assay.create_scorer("faithfulness", model="openai/gpt-4o-mini").fingerprint
        + "\n"
        + assay.create_scorer("keyword-coverage").fingerprint
        + "\n"
    )
    assert outs == {here}


def test_builtins_and_callable_objects_have_stable_fingerprints() -> None:
    assert code_fingerprint(str.upper) == code_fingerprint(str.upper)
    assert code_fingerprint(str.upper) != code_fingerprint(str.lower)
    assert code_fingerprint("a".upper) != code_fingerprint(len)

    class Threshold:
        def __init__(self, limit: int) -> None:
            self.limit = limit

        def __call__(self, text: str) -> bool:
            return len(text) < self.limit

    assert code_fingerprint(Threshold(3)) == code_fingerprint(Threshold(3))
    assert code_fingerprint(Threshold(3)) != code_fingerprint(Threshold(4))
