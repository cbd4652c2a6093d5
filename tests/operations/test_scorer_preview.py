"""``operations.scorer_preview``: the catalogue, field paths, building preview scorers."""

from __future__ import annotations

import pytest

from assay.operations.scorer_preview import (
    FieldErrors,
    PreviewRow,
    PreviewScorer,
    build_preview_scorers,
    is_immediate,
    loc_path,
    score_row,
    scorer_catalogue,
)
from assay.scoring.registry import UnknownScorerError


def test_loc_path_reads_like_code() -> None:
    assert loc_path(["scorers", 0, "params", "threshold"]) == "scorers[0].params.threshold"
    assert loc_path(["rows"]) == "rows"
    assert loc_path([]) == ""


def test_catalogue_defaults_validate_as_params() -> None:
    """The defaults a form starts from are each accepted; what may still be missing are
    required params (no default) and rules across params (one of two must be set)."""
    field_problems = []
    for entry in scorer_catalogue():
        try:
            build_preview_scorers([PreviewScorer(type=entry.type, params=entry.defaults)])
        except FieldErrors as exc:
            field_problems += [
                p.path
                for p in exc.problems
                if p.type != "missing" and p.path != "scorers[0].params"
            ]
    assert field_problems == []


def test_every_bad_param_of_every_scorer_is_reported_at_once() -> None:
    with pytest.raises(FieldErrors) as caught:
        build_preview_scorers(
            [
                PreviewScorer(type="content-similarity", params={"ignore_case": "maybe"}),
                PreviewScorer(type="exact-match"),
                PreviewScorer(type="keyword-coverage", params={"nope": 1}),
            ]
        )
    paths = [problem.path for problem in caught.value.problems]
    assert paths == ["scorers[0].params.ignore_case", "scorers[2].params.nope"]


def test_camel_case_params_are_reported_under_their_python_name() -> None:
    with pytest.raises(FieldErrors) as caught:
        build_preview_scorers(
            [PreviewScorer(type="content-similarity", params={"ignoreCase": "maybe"})]
        )
    assert caught.value.problems[0].path == "scorers[0].params.ignore_case"


def test_unknown_type_suggests_a_name() -> None:
    with pytest.raises(UnknownScorerError, match="exact-match"):
        build_preview_scorers([PreviewScorer(type="exact-mach")])


async def test_code_scorers_are_immediate_and_score() -> None:
    (scorer,) = build_preview_scorers([PreviewScorer(type="exact-match")])
    assert is_immediate(scorer)
    result = await score_row(scorer, PreviewRow(output="a", expected_output="a"))
    assert (result.status, result.score) == ("ready", 1.0)
    (judge,) = build_preview_scorers([PreviewScorer(type="faithfulness")])
    assert not is_immediate(judge)
