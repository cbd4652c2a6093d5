"""CI summaries: a stored run (against a baseline run) as a Markdown PR comment.

``assay ci summary RUN [--baseline RUN] --markdown`` and the pytest plugin's
``--assay-summary PATH`` both end in ``analysis.report_markdown.ci_markdown``; this module
reads the runs from the store and compares them with the paired statistics of
``runs compare`` (``compare_stored``). Links point at the web UI when a server URL is given
or set in ``ASSAY_SERVER_URL``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from assay.analysis.report_markdown import GITHUB_COMMENT_LIMIT, SummaryEntry, ci_markdown
from assay.operations.stored_runs import compare_stored
from assay.store import Store, using_store

SERVER_URL_ENV = "ASSAY_SERVER_URL"

__all__ = ["SummaryEntry", "ci_summary", "server_url_from_env", "session_markdown"]


def server_url_from_env() -> str | None:
    """``ASSAY_SERVER_URL`` (where ``assay serve`` runs for the team), if set."""
    url = os.environ.get(SERVER_URL_ENV, "").strip()
    return url or None


def ci_summary(
    run: str,
    *,
    baseline: str | None = None,
    store: Store | None = None,
    server_url: str | None = None,
    limit: int = GITHUB_COMMENT_LIMIT,
) -> str:
    """The Markdown summary of stored run ``run`` (id or unique prefix), compared with
    ``baseline`` when given."""
    with using_store(store) as db:
        record = db.runs.get(run)
        entry = SummaryEntry(record)
        if baseline is not None:
            base = db.runs.get(baseline)
            entry = SummaryEntry(record, base, compare_stored(base.id, record.id, store=db))
    title = f"assay · {record.info.name or 'run'} `{record.id[:8]}`"
    return ci_markdown(
        [entry], server_url=server_url or server_url_from_env(), title=title, limit=limit
    )


def session_markdown(
    entries: Sequence[SummaryEntry],
    *,
    server_url: str | None = None,
    title: str = "assay",
    limit: int = GITHUB_COMMENT_LIMIT,
) -> str:
    """The Markdown summary of several runs already compared (the pytest session's)."""
    return ci_markdown(entries, server_url=server_url, title=title, limit=limit)
