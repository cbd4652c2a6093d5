"""`assay runs export -o FILE` picks the format from the suffix without importing the store;
its table must stay in step with the report writer's."""

from assay.cli.runs import _SUFFIX_FORMATS
from assay.operations.reports import REPORT_FORMATS


def test_export_suffixes_include_every_report_suffix() -> None:
    for suffix, kind in REPORT_FORMATS.items():
        assert _SUFFIX_FORMATS[suffix] == kind
    assert _SUFFIX_FORMATS[".csv"] == "csv" and _SUFFIX_FORMATS[".jsonl"] == "jsonl"
