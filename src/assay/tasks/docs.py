"""Where a task's docs come from: local files, saved Hugging Face data, callables, overrides.

lm-eval hands ``dataset_path``/``dataset_name``/``dataset_kwargs`` to
``datasets.load_dataset``, which downloads from the hub. assay never downloads: a task's
data is one of

* ``custom_dataset``: a callable returning ``{split: docs}``, called with ``metadata`` and
  ``dataset_kwargs`` as keyword arguments (as lm-eval does);
* ``dataset_path: json|csv|parquet`` (the Hugging Face builder names) with
  ``dataset_kwargs.data_files`` (a path, a list, or ``{split: path(s)}``; without splits the
  files are the ``train`` split, as in ``datasets``);
* ``dataset_path`` naming a local directory: a dataset saved with ``save_to_disk``
  (``DatasetDict`` splits, or one ``Dataset`` serving every split), or a directory of
  ``<split>.jsonl|csv|parquet`` files (``dataset_kwargs.data_files`` may map splits to files
  inside it);
* ``dataset_path`` naming one local file: it is the evaluation split;
* docs passed directly (``--docs``, stored datasets): they replace the dataset.

Relative paths are resolved against the directory of the task's YAML. A hub name that is
not a local path is an error saying to pass ``--docs`` or a local path (never a network
call). Files are read with assay's streaming readers (``assay.datasets.formats``); CSV
cells stay strings, as they are in the file.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.datasets.errors import DatasetError
from assay.datasets.formats import hf_layout
from assay.extras import require_extra
from assay.tasks.config import TaskConfig
from assay.tasks.errors import TaskDocsError

Doc = dict[str, Any]

_BUILDERS = {"json": "jsonl", "jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonl.gz": "jsonl",
    ".csv": "csv",
    ".csv.gz": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


class TaskDataset:
    """The splits of a task's data, each read (and cached) when first asked for."""

    def __init__(self, loaders: Mapping[str, Callable[[], list[Doc]]], *, source: str) -> None:
        self._loaders = dict(loaders)
        self._cache: dict[str, list[Doc]] = {}
        self.source = source

    def split_names(self) -> list[str]:
        """The splits this data has."""
        return list(self._loaders)

    def has_split(self, name: str) -> bool:
        return name in self._loaders

    def split(self, name: str, *, key: str | None = None) -> list[Doc]:
        """The docs of split ``name``; ``key`` names the config key that asked (for errors)."""
        if name not in self._loaders:
            have = ", ".join(self._loaders) or "none"
            raise TaskDocsError(
                f"split '{name}' not found in {self.source} (splits: {have})", key=key
            )
        if name not in self._cache:
            self._cache[name] = self._loaders[name]()
        return self._cache[name]


def open_dataset(config: TaskConfig, *, base_dir: Path | None = None) -> TaskDataset:
    """The ``TaskDataset`` a config describes (nothing is read until a split is asked for)."""
    base = base_dir or (config.source_path.parent if config.source_path else Path.cwd())
    kwargs = dict(config.dataset_kwargs or {})
    if config.custom_dataset is not None:
        return _custom(config, kwargs)
    path = config.dataset_path
    if path is None:
        raise TaskDocsError(
            "the task names no data: set dataset_path or custom_dataset, or pass docs "
            "directly (--docs)",
            key="dataset_path",
        )
    data_files = kwargs.get("data_files")
    if path in _BUILDERS:
        if data_files is None:
            raise TaskDocsError(
                f"dataset_path '{path}' needs dataset_kwargs.data_files naming local files",
                key="dataset_kwargs.data_files",
            )
        return _from_data_files(data_files, base, fmt=_BUILDERS[path])
    local = _local(path, base)
    if local is None:
        raise TaskDocsError(
            f"'{path}' is not a local file or directory (looked in {base}); assay does not "
            "download Hugging Face hub datasets: pass the docs with --docs DOCS.jsonl, point "
            "dataset_path at local files, or save the dataset with save_to_disk and give "
            "its directory",
            key="dataset_path",
        )
    if local.is_file():
        split = config.test_split or config.validation_split or "test"
        return TaskDataset({split: _file_loader(local)}, source=str(local))
    if data_files is not None:
        return _from_data_files(data_files, local, fmt=None)
    if hf_layout.is_hf_dir(local):
        return _saved_hf(local, config)
    return _split_files(local)


def _local(path: str, base: Path) -> Path | None:
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = base / candidate
    return candidate if candidate.exists() else None


def _custom(config: TaskConfig, kwargs: dict[str, Any]) -> TaskDataset:
    assert config.custom_dataset is not None
    try:
        result = config.custom_dataset(**(config.metadata or {}), **kwargs)
    except Exception as exc:
        raise TaskDocsError(
            f"custom_dataset raised {type(exc).__name__}: {exc}", key="custom_dataset"
        ) from exc
    if not isinstance(result, Mapping):
        raise TaskDocsError(
            f"custom_dataset must return a mapping of split name to docs, got "
            f"{type(result).__name__}",
            key="custom_dataset",
        )
    loaders: dict[str, Callable[[], list[Doc]]] = {}
    for split, docs in result.items():
        loaders[str(split)] = _list_loader(docs, f"custom_dataset['{split}']")
    return TaskDataset(loaders, source="custom_dataset")


def _list_loader(docs: Any, where: str) -> Callable[[], list[Doc]]:
    def load() -> list[Doc]:
        return as_doc_list(docs, where=where)

    return load


def as_doc_list(docs: Any, *, where: str) -> list[Doc]:
    """``docs`` (a list of dicts, a Hugging Face ``Dataset``, any iterable of mappings) as a
    list of dicts; anything else is an error naming ``where`` and the offending index."""
    if isinstance(docs, Mapping | str | bytes) or not isinstance(docs, Iterable):
        raise TaskDocsError(f"{where}: expected a list of docs, got {type(docs).__name__}")
    out: list[Doc] = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, Mapping):
            raise TaskDocsError(
                f"{where}[{index}]: a doc must be a mapping of fields, got {type(doc).__name__}"
            )
        out.append(dict(doc))
    return out


def _kind_of(path: Path) -> str | None:
    name = path.name.lower()
    for ext, kind in _EXTENSIONS.items():
        if name.endswith(ext):
            return kind
    return None


def _file_loader(path: Path, fmt: str | None = None) -> Callable[[], list[Doc]]:
    kind = fmt or _kind_of(path)
    if kind is None:
        raise TaskDocsError(
            f"{path}: cannot tell the format from the name (use .jsonl, .csv or .parquet)",
            key="dataset_path",
        )

    def load() -> list[Doc]:
        return read_doc_file(path, kind)

    return load


def read_doc_file(path: Path, kind: str) -> list[Doc]:
    """All rows of a JSONL, CSV or Parquet file as dicts (errors name the file and line)."""
    module = importlib.import_module(f"assay.datasets.formats.{kind}")
    try:
        rows = module.open_rows(path, source=str(path))
        return [dict(row) for _, row in rows.rows]
    except DatasetError as exc:
        raise TaskDocsError(str(exc)) from None


def load_docs_file(path: str | Path, *, split: str | None = None) -> list[Doc]:
    """The docs of a ``--docs`` file: JSONL, CSV or Parquet by extension, or a directory
    saved with ``save_to_disk`` (``split`` names a ``DatasetDict`` split)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise TaskDocsError(f"{p}: no such file or directory", key="docs")
    if p.is_dir():
        return _hf_loader(p, split)()
    kind = _kind_of(p)
    if kind is None:
        raise TaskDocsError(
            f"{p}: cannot tell the format from the name (use .jsonl, .csv or .parquet)",
            key="docs",
        )
    return read_doc_file(p, kind)


def _many(loaders: list[Callable[[], list[Doc]]]) -> Callable[[], list[Doc]]:
    def load() -> list[Doc]:
        out: list[Doc] = []
        for loader in loaders:
            out.extend(loader())
        return out

    return load


def _from_data_files(data_files: Any, base: Path, *, fmt: str | None) -> TaskDataset:
    """``data_files`` as ``datasets`` reads it: a path or list (the ``train`` split) or a
    mapping of split to path(s)."""
    spec: dict[str, Any] = (
        {str(k): v for k, v in data_files.items()}
        if isinstance(data_files, Mapping)
        else {"train": data_files}
    )
    loaders: dict[str, Callable[[], list[Doc]]] = {}
    for split, files in spec.items():
        names = [files] if isinstance(files, str) else files
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TaskDocsError(
                f"data_files for split '{split}' must be a path or a list of paths",
                key=f"dataset_kwargs.data_files.{split}",
            )
        paths = []
        for name in names:
            path = Path(name).expanduser()
            path = path if path.is_absolute() else base / path
            if not path.is_file():
                raise TaskDocsError(
                    f"data file not found: {path}", key=f"dataset_kwargs.data_files.{split}"
                )
            paths.append(path)
        loaders[split] = _many([_file_loader(p, fmt) for p in paths])
    return TaskDataset(loaders, source=str(base))


def _saved_hf(path: Path, config: TaskConfig) -> TaskDataset:
    dict_file = path / hf_layout.DICT_FILE
    if dict_file.is_file():
        import json

        splits = json.loads(dict_file.read_text(encoding="utf-8")).get("splits", [])
        return TaskDataset({str(s): _hf_loader(path, str(s)) for s in splits}, source=str(path))
    # One saved Dataset: it is the evaluation split.
    split = config.test_split or config.validation_split or "test"
    return TaskDataset({split: _hf_loader(path, None)}, source=str(path))


def _hf_loader(path: Path, split: str | None) -> Callable[[], list[Doc]]:
    def load() -> list[Doc]:
        require_extra("parquet", "the Hugging Face dataset format")
        from assay.datasets.formats import hf as hf_format

        try:
            rows = hf_format.open_rows(path, source=str(path), split=split)
            return [dict(row) for _, row in rows.rows]
        except DatasetError as exc:
            raise TaskDocsError(str(exc)) from None

    return load


def _split_files(directory: Path) -> TaskDataset:
    loaders: dict[str, Callable[[], list[Doc]]] = {}
    for path in sorted(directory.iterdir()):
        kind = _kind_of(path)
        if kind is None or not path.is_file():
            continue
        split = path.name[: -len(next(e for e in _EXTENSIONS if path.name.lower().endswith(e)))]
        if split in loaders:
            raise TaskDocsError(f"{directory}: two files for split '{split}'", key="dataset_path")
        loaders[split] = _file_loader(path, kind)
    if not loaders:
        raise TaskDocsError(
            f"{directory} holds no <split>.jsonl/.csv/.parquet files and is not a dataset "
            "saved with save_to_disk",
            key="dataset_path",
        )
    return TaskDataset(loaders, source=str(directory))


def apply_process_docs(
    process_docs: Callable[..., Any] | None, docs: list[Doc], *, key: str
) -> list[Doc]:
    """``process_docs`` applied to a split, as lm-eval does.

    lm-eval passes a Hugging Face ``Dataset`` and most ``process_docs`` functions call its
    ``.map``/``.filter``; when ``datasets`` is installed the docs are wrapped in one, else
    the plain list is passed. The result is turned back into a list of dicts.
    """
    if process_docs is None:
        return docs
    argument: Any = docs
    try:
        import datasets

        if docs:
            argument = datasets.Dataset.from_list(docs)
    except ImportError:
        pass
    except Exception:  # Arrow cannot type these docs (mixed types): pass the list
        argument = docs
    try:
        result = process_docs(argument)
    except Exception as exc:
        raise TaskDocsError(f"process_docs raised {type(exc).__name__}: {exc}", key=key) from exc
    return as_doc_list(result, where="process_docs result")
