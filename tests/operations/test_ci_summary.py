"""``ci_summary``: a stored run's Markdown comment, alone or against a baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.ci_summary import ci_summary, server_url_from_env
from assay.operations.stored_runs import run_stored
from assay.store import open_store

ITEMS = [{"id": f"i{k}", "input": f"q{k}", "expected_output": f"Q{k}"} for k in range(20)]


def test_a_run_alone_and_against_its_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_SERVER_URL", "http://127.0.0.1:8000/")
    assert server_url_from_env() == "http://127.0.0.1:8000/"
    with open_store(str(tmp_path / "s.db")) as db:
        good = run_stored(ITEMS, str.upper, ["exact-match"], store=db, progress=False, name="bot")
        bad = run_stored(ITEMS, str.lower, ["exact-match"], store=db, progress=False, name="bot")
        alone = ci_summary(good.id, store=db)
        assert "| bot](http://127.0.0.1:8000/runs/" not in alone  # the link holds the label
        assert f"[bot](http://127.0.0.1:8000/runs/{good.id})" in alone
        assert "| 1 [1, 1] | — | — | no baseline |" in alone
        compared = ci_summary(bad.id, baseline=good.id, store=db, limit=800)
    assert len(compared) <= 800
    assert "regressed (n=20)" in compared and "1 significant regression(s)" in compared
    assert "more regressed item(s) not shown" in compared


def test_an_unknown_baseline_names_the_id(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "s.db")) as db:
        run = run_stored(ITEMS, str.upper, ["exact-match"], store=db, progress=False)
        with pytest.raises(LookupError, match="nosuch"):
            ci_summary(run.id, baseline="nosuch", store=db)
