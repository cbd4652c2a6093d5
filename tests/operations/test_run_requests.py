"""``operations.run_requests``: what a run asked for over the network may contain."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.operations.run_requests import RunRequest, check_run_request
from assay.operations.scorer_preview import FieldErrors
from assay.scoring.registry import UnknownScorerError

ITEMS = [{"id": "a", "output": "x"}]


@pytest.mark.parametrize(
    "target",
    [
        {"type": "callable", "ref": "os:system"},
        {"kind": "callable", "ref": "os:system"},
        {"type": "agent", "ref": "pkg:agent"},
        {"type": "model", "model": "m", "prompt": "{input}", "output_fn": "os:getcwd"},
    ],
)
def test_targets_that_import_code_are_refused(target: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="not allowed"):
        RunRequest(data=ITEMS, scorers=["exact-match"], target=target)


def test_exactly_one_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        RunRequest(scorers=["exact-match"])
    with pytest.raises(ValidationError, match="exactly one"):
        RunRequest(dataset="d", data=ITEMS, scorers=["exact-match"])
    with pytest.raises(ValidationError, match="'version' needs 'dataset'"):
        RunRequest(data=ITEMS, version=2, scorers=["exact-match"])


def test_scorers_checked_with_field_paths() -> None:
    check_run_request(RunRequest(data=ITEMS, scorers=["exact-match", {"type": "tone"}]))
    with pytest.raises(UnknownScorerError):
        check_run_request(RunRequest(data=ITEMS, scorers=["exact-mtch"]))
    bad = RunRequest(
        data=ITEMS,
        scorers=["exact-match", {"type": "content-similarity", "params": {"x": 1}}, {"p": 1}],
    )
    with pytest.raises(FieldErrors) as caught:
        check_run_request(bad)
    assert [p.path for p in caught.value.problems] == ["scorers[1].params.x", "scorers[2].type"]
