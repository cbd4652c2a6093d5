"""Writing a run's reports: HTML (self-contained) and JSON (summary + every result).

``write_run_reports`` is what ``assay run --report/--json`` does after a run; ``export_run``
is ``assay runs export`` (the format from the file name); ``write_comparison_report`` is
``assay runs compare --report``. A stored run's results are streamed from the store, an
in-memory run's come from the ``RunResult``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.runner.result import RunResult
from assay.store.engine import using_store

if TYPE_CHECKING:
    from assay.analysis.compare import RunComparison
    from assay.store import Store
    from assay.types import RunRecord

PathArg = str | os.PathLike[str]

REPORT_FORMATS = {".html": "html", ".htm": "html", ".json": "json"}


class ReportError(ValueError):
    """A report cannot be written as asked (e.g. an unknown file type)."""


def write_run_reports(
    result: RunResult,
    *,
    report: PathArg | None = None,
    json_path: PathArg | None = None,
    stored: bool = False,
    store: Store | None = None,
) -> list[Path]:
    """Write ``result``'s HTML report to ``report`` and/or its JSON export to
    ``json_path``; returns the paths written. A ``stored`` run's results are read from
    ``store`` (default: the default store); otherwise from ``result.results``."""
    if not report and not json_path:
        return []
    from assay.analysis.report_html import write_html_report
    from assay.analysis.report_json import write_run_json

    written: list[Path] = []
    if stored:
        with using_store(store) as db:
            record = db.runs.get(result.id)
            if report:
                calibrated, corrected = _calibration_notes(record, db)
                written.append(
                    write_html_report(
                        report,
                        record,
                        db.runs.results(record.id),
                        calibrated=calibrated,
                        judge_corrected=corrected,
                    )
                )
            if json_path:
                write_run_json(json_path, record, db.runs.results(record.id))
                written.append(Path(json_path))
        return written
    if report:
        written.append(write_html_report(report, result.record, result.results))
    if json_path:
        write_run_json(json_path, result.record, result.results)
        written.append(Path(json_path))
    return written


def export_run(run_id: str, path: PathArg, *, store: Store | None = None) -> Path:
    """Write a stored run (id or unique prefix) as HTML or JSON, chosen by ``path``'s
    suffix (``.html``/``.htm``/``.json``)."""
    target = Path(path)
    kind = REPORT_FORMATS.get(target.suffix.lower())
    if kind is None:
        raise ReportError(f"{target}: use a .json or .html file name")
    from assay.analysis.report_html import write_html_report
    from assay.analysis.report_json import write_run_json

    with using_store(store) as db:
        record = db.runs.get(run_id)
        results = db.runs.results(record.id)
        if kind == "html":
            write_html_report(target, record, results)
        else:
            write_run_json(target, record, results)
    return target


def write_comparison_report(
    comparison: RunComparison, path: PathArg, *, store: Store | None = None
) -> Path:
    """Write the HTML report of the candidate run of ``comparison`` with the comparison
    against its baseline."""
    from assay.analysis.report_html import write_html_report

    with using_store(store) as db:
        candidate = db.runs.get(comparison.b.id)
        return write_html_report(
            path, candidate, db.runs.results(candidate.id), comparison=comparison
        )


def _calibration_notes(
    record: RunRecord, db: Store
) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """What a stored run's report says about its scorers' calibration: ``calibrated: yes
    (...) / no / stale (...)`` per judge scorer (and per scorer ever calibrated), and the
    judge-corrected means of scorers with human-labelled items (``metadata.human_label``)."""
    from assay.calibration.certificates import shown_calibration_statuses
    from assay.calibration.judge_corrected import judge_corrected_means

    calibrated = {
        spec.id: status.describe()
        for spec, status in shown_calibration_statuses(record.info.scorers, store=db)
    }
    try:
        corrected = judge_corrected_means(record.id, store=db)
    except ValueError:  # labels that are not numbers: no correction rather than a wrong one
        corrected = {}
    return calibrated, {k: v for k, v in corrected.items() if v.get("n_labelled")}
