"""The file names of a Hugging Face ``save_to_disk`` directory, and how to recognise one.

Apart from ``hf`` (which reads the Arrow shards with pyarrow) so that code that only has to
tell a saved dataset from a folder of files, such as a task's dataset resolution, runs on the
core install, where pyarrow (the ``parquet`` extra) may be missing.
"""

from __future__ import annotations

from pathlib import Path

STATE_FILE = "state.json"
INFO_FILE = "dataset_info.json"
DICT_FILE = "dataset_dict.json"


def is_hf_dir(path: Path) -> bool:
    """Whether ``path`` looks like a ``save_to_disk`` output (Dataset or DatasetDict)."""
    return path.is_dir() and any(
        (path / name).is_file() for name in (STATE_FILE, INFO_FILE, DICT_FILE)
    )
