"""Dataset file formats. Each module offers ``open_rows(path, source=...) -> RowSource`` and
``write(items, path) -> int``; ``assay.datasets.io`` picks one by extension or name and
imports it lazily, so JSONL users never pay for importing pyarrow."""
