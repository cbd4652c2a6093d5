"""The recipe in docs/judge-scorers.md runs as written and does what it says."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.scoring.registry import get_scorer_type, unregister

RECIPE = (Path(__file__).parents[3] / "docs" / "judge-scorers.md").read_text()


@pytest.fixture
def recipe() -> Iterator[dict[str, Any]]:
    blocks = re.findall(r"```python\n(.*?)```", RECIPE, re.S)
    assert blocks, "docs/judge-scorers.md lost its recipe"  # the recipe is the first block
    namespace: dict[str, Any] = {"__name__": "judge_scorer_recipe"}
    try:
        code = compile(blocks[0], "docs/judge-scorers.md", "exec", dont_inherit=True)
        exec(code, namespace)
        yield namespace
    finally:
        unregister("politeness")


def test_the_example_scores_and_reasons_as_printed(recipe: dict[str, Any]) -> None:
    result = recipe["result"]
    assert result.status == "ready"
    block = RECIPE.split("```python")[1].split("```")[0]
    printed = block.rstrip().splitlines()[-1]  # the comment after print(...)
    assert f"# {result.score} {result.reason}" == printed
    assert len(recipe["judge"].calls) == 2


def test_the_example_type_is_derived_from_the_declaration(recipe: dict[str, Any]) -> None:
    info = get_scorer_type("politeness").info()
    assert (info.kind, info.mode, info.score_range, info.higher_is_better) == (
        "judge",
        "async",
        (0.0, 1.0),
        True,
    )
    assert info.description.startswith("Share of the response's sentences that are polite")


def test_the_example_reports_its_missing_input(recipe: dict[str, Any]) -> None:
    import assay

    judge = assay.ScriptedModel(script=[])
    scorer = assay.create_scorer("politeness").with_judge_model(judge)
    result = scorer.run_sync(output="Thanks for writing!")
    assert result.status == "error" and result.error is not None
    assert "politeness needs input: pass the customer's message" in result.error.message
    assert judge.calls == []


def test_the_code_scorer_example_is_declared_the_same_way_and_prints_as_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", RECIPE, re.S)
    assert len(blocks) >= 2, "docs/judge-scorers.md lost its code-scorer example"
    namespace: dict[str, Any] = {"__name__": "code_scorer_recipe"}
    try:
        exec(compile(blocks[1], "docs/judge-scorers.md", "exec", dont_inherit=True), namespace)
        printed = blocks[1].rstrip().splitlines()[-1]
        assert f"# {capsys.readouterr().out.strip()}" == printed
        info = get_scorer_type("max-length").info()
        assert (info.kind, info.description) == (
            "code",
            "1 when the output is at most `limit` characters long, else 0.",
        )
        scorer = namespace["assay"].create_scorer("max-length")
        assert scorer.run_sync(output="").status == "not_scorable"
    finally:
        unregister("max-length")
