"""Every built-in judge's instructions and step templates are user-overridable params:
listed by the type (``info().prompts``), taking effect in the built scorer, part of the
fingerprint, and printed by ``assay scorers show``.

The list of judges comes from the registry, so a judge added later is covered too; the
known sixteen are pinned so a judge that stops being one (or disappears) is noticed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import assay
from assay.scoring.judge import JudgeStep
from assay.scoring.registry import SCORER_TYPES, create_scorer, get_scorer_type
from assay.scoring.scorer import Scorer

SRC = Path(assay.__file__).resolve().parents[1]
KNOWN_JUDGES = {
    "answer-relevancy", "answer-similarity", "bias", "context-precision", "context-recall",
    "context-relevance", "faithfulness", "hallucination", "multi-turn-judge",
    "noise-sensitivity", "prompt-alignment", "rubric", "summarization",
    "tool-call-accuracy-llm", "toxicity", "trajectory-accuracy-llm",
}  # fmt: skip
JUDGES = sorted(t for t in SCORER_TYPES.names() if get_scorer_type(t).kind == "judge")
REQUIRED: dict[str, dict[str, object]] = {
    "multi-turn-judge": {"criterion": "The assistant stays polite."},
    "noise-sensitivity": {"baseline_response": "Paris.", "noisy_query": "Capital of France?"},
    "tool-call-accuracy-llm": {
        "available_tools": [{"id": "get_weather", "description": "Weather of a city"}]
    },
}
"""Params a judge cannot be built without."""
OVERRIDE = "Judge with extra care; {scale} is the scale."


def test_the_sixteen_judges_are_all_there() -> None:
    assert set(JUDGES) == KNOWN_JUDGES


def build(type_id: str, **params: object) -> Scorer:
    return create_scorer(type_id, model="openai/a", **REQUIRED.get(type_id, {}), **params)


def _judge_steps(type_id: str, **params: object) -> dict[str, JudgeStep]:
    scorer = build(type_id, **params)
    return {
        name: step
        for name, step in scorer.steps
        if isinstance(step, JudgeStep) and name in ("preprocess", "analyze")
    }


@pytest.mark.parametrize("type_id", JUDGES)
def test_instructions_and_every_template_are_overridable(type_id: str) -> None:
    prompts = get_scorer_type(type_id).info().prompts
    steps = [name for name in prompts if name != "instructions"]
    assert prompts["instructions"].strip() and steps, prompts
    assert set(steps) == set(_judge_steps(type_id)), "each judge step lists its template"

    base = build(type_id)
    assert base.judge is not None
    assert base.judge.instructions.startswith(prompts["instructions"].strip())

    strict = build(type_id, instructions="You are a strict grader.")
    assert strict.judge is not None
    assert strict.judge.instructions.startswith("You are a strict grader.")
    assert prompts["instructions"].strip() not in strict.judge.instructions
    assert strict.fingerprint != base.fingerprint

    defaults = _judge_steps(type_id)
    for step in steps:
        changed = _judge_steps(type_id, templates={step: OVERRIDE})
        assert changed[step].version != defaults[step].version, step  # the text changed
        others = [s for s in steps if s != step]
        assert all(changed[s].version == defaults[s].version for s in others)
        fingerprint = build(type_id, templates={step: OVERRIDE})
        assert fingerprint.fingerprint != base.fingerprint, step
    # an override equal to nothing set is the default scorer
    unset = build(type_id, instructions=None, templates=None)
    assert unset.fingerprint == base.fingerprint


def test_scorers_show_prints_every_judges_overridable_texts() -> None:
    # one interpreter runs `assay scorers show` for every judge (16 start-ups would cost
    # more than the test is worth); each command runs as the console script does
    code = (
        "import sys\n"
        "from assay.cli.app import main\n"
        "for type_id in sys.argv[1:]:\n"
        "    print(f'=== {type_id}', flush=True)\n"
        "    sys.argv = ['assay', 'scorers', 'show', type_id]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, (type_id, exc.code)\n"
        "    sys.stdout.flush()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *JUDGES],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC),
             "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sections = {}
    for part in proc.stdout.split("=== ")[1:]:
        type_id, _, text = part.partition("\n")
        sections[type_id] = text
    assert set(sections) == set(JUDGES)
    for type_id, text in sections.items():
        flat = " ".join(text.split())
        prompts = get_scorer_type(type_id).info().prompts
        assert "override with param 'instructions'" in flat, type_id
        for name, default in prompts.items():
            if name != "instructions":
                assert f"override with param 'templates.{name}'" in flat, (type_id, name)
            assert " ".join(default.split())[:60] in flat, (type_id, name)
