"""Task docs: local JSONL/CSV/Parquet, saved HF datasets, custom_dataset, overrides, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.tasks.config import TaskConfig
from assay.tasks.docs import load_docs_file, open_dataset
from assay.tasks.errors import TaskConfigError, TaskDocsError
from assay.tasks.task import Task
from assay.tasks.yaml_loader import load_task_config

ROWS = [{"q": "one", "a": "1"}, {"q": "two", "a": "2"}]


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def config(**extra: Any) -> TaskConfig:
    base: dict[str, Any] = {"task": "t", "doc_to_text": "{{q}}", "doc_to_target": "{{a}}"}
    base.update(extra)
    return TaskConfig.model_validate(base)


def test_a_jsonl_file_next_to_the_yaml_is_the_eval_split(tmp_path: Path) -> None:
    jsonl(tmp_path / "data" / "test.jsonl", ROWS)
    (tmp_path / "t.yaml").write_text(
        "task: t\ndataset_path: data/test.jsonl\ntest_split: test\n"
        "doc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n",
        encoding="utf-8",
    )
    loaded = load_task_config(tmp_path / "t.yaml")
    assert isinstance(loaded, TaskConfig)
    task = Task(loaded)
    assert task.eval_docs() == ROWS
    assert task.eval_docs(limit=1) == ROWS[:1]


def test_a_directory_of_split_files(tmp_path: Path) -> None:
    jsonl(tmp_path / "d" / "train.jsonl", [{"q": "t", "a": "0"}])
    jsonl(tmp_path / "d" / "validation.jsonl", ROWS)
    dataset = open_dataset(config(dataset_path="d"), base_dir=tmp_path)
    assert sorted(dataset.split_names()) == ["train", "validation"]
    task = Task(config(dataset_path="d", validation_split="validation"), base_dir=tmp_path)
    assert task.eval_docs() == ROWS  # no test split: validation
    with pytest.raises(TaskDocsError, match="split 'test' not found"):
        dataset.split("test")


def test_json_builder_with_data_files_per_split(tmp_path: Path) -> None:
    jsonl(tmp_path / "a.jsonl", ROWS[:1])
    jsonl(tmp_path / "b.jsonl", ROWS[1:])
    cfg = config(
        dataset_path="json",
        dataset_kwargs={"data_files": {"test": ["a.jsonl", "b.jsonl"], "train": "a.jsonl"}},
        test_split="test",
        training_split="train",
    )
    task = Task(cfg, base_dir=tmp_path)
    assert task.eval_docs() == ROWS
    assert task.fewshot_docs() == ROWS[:1]


def test_data_files_without_splits_are_the_train_split(tmp_path: Path) -> None:
    jsonl(tmp_path / "a.jsonl", ROWS)
    cfg = config(dataset_path="json", dataset_kwargs={"data_files": "a.jsonl"})
    assert open_dataset(cfg, base_dir=tmp_path).split_names() == ["train"]


def test_csv_and_parquet_files(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text("q,a\none,1\ntwo,2\n", encoding="utf-8")
    task = Task(config(dataset_path="test.csv", test_split="test"), base_dir=tmp_path)
    assert task.eval_docs() == ROWS  # CSV cells stay strings
    pq.write_table(
        pa.Table.from_pylist([{"q": "one", "n": 1, "l": [1, 2]}]), tmp_path / "x.parquet"
    )
    task = Task(config(dataset_path="x.parquet", test_split="test"), base_dir=tmp_path)
    assert task.eval_docs() == [{"q": "one", "n": 1, "l": [1, 2]}]


def test_a_dataset_saved_with_save_to_disk(tmp_path: Path) -> None:
    import datasets  # a dev dependency

    saved = datasets.DatasetDict(
        {
            "test": datasets.Dataset.from_list(
                [{"q": "one", "choices": {"text": ["x", "y"], "label": ["A", "B"]}}]
            ),
            "train": datasets.Dataset.from_list(
                [{"q": "t", "choices": {"text": ["z"], "label": ["A"]}}]
            ),
        }
    )
    saved.save_to_disk(str(tmp_path / "saved"))
    cfg = config(dataset_path="saved", test_split="test", training_split="train")
    task = Task(cfg, base_dir=tmp_path)
    assert task.eval_docs() == [{"q": "one", "choices": {"text": ["x", "y"], "label": ["A", "B"]}}]
    assert task.fewshot_docs()[0]["q"] == "t"  # training split


def test_custom_dataset_gets_metadata_and_dataset_kwargs(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    def make(**kwargs: Any) -> dict[str, list[dict[str, Any]]]:
        calls.append(kwargs)
        return {"test": ROWS, "train": ROWS[:1]}

    cfg = config(
        custom_dataset=make, metadata={"version": 1}, dataset_kwargs={"size": 2}, test_split="test"
    )
    task = Task(cfg)
    assert task.eval_docs() == ROWS
    assert calls == [{"version": 1, "size": 2}]


def test_process_docs_applies_to_the_split_and_to_given_docs() -> None:
    def upper(dataset: Any) -> Any:
        return dataset.map(lambda doc: {"q": doc["q"].upper()})

    cfg = config(custom_dataset=lambda **_: {"test": ROWS}, test_split="test", process_docs=upper)
    assert [d["q"] for d in Task(cfg).eval_docs()] == ["ONE", "TWO"]
    given = Task(config(process_docs=upper), docs=[{"q": "three", "a": "3"}])
    assert given.eval_docs() == [{"q": "THREE", "a": "3"}]


def test_process_docs_that_raises_is_reported() -> None:
    def broken(dataset: Any) -> Any:
        raise KeyError("nope")

    with pytest.raises(TaskDocsError, match="process_docs raised KeyError"):
        Task(config(process_docs=broken), docs=ROWS).eval_docs()


def test_given_docs_replace_the_dataset() -> None:
    task = Task(config(dataset_path="openai/gsm8k", test_split="test"), docs=ROWS)
    assert task.eval_docs() == ROWS


def test_a_hub_name_is_a_clear_error_not_a_download(tmp_path: Path) -> None:
    task = Task(config(dataset_path="openai/gsm8k", test_split="test"), base_dir=tmp_path)
    with pytest.raises(TaskConfigError) as info:
        task.eval_docs()
    assert info.value.key == "dataset_path"
    assert "--docs" in str(info.value) and "does not download" in str(info.value)


def test_fewshot_from_an_unreadable_dataset_with_given_docs(tmp_path: Path) -> None:
    cfg = config(dataset_path="openai/gsm8k", test_split="test", fewshot_split="train")
    task = Task(cfg, docs=ROWS, base_dir=tmp_path)
    with pytest.raises(TaskDocsError, match="pass few-shot docs or use num_fewshot 0"):
        task.fewshot_docs()
    assert Task(cfg, docs=ROWS, fewshot_docs=ROWS[:1]).fewshot_docs() == ROWS[:1]


def test_bad_rows_and_bad_docs_are_located(tmp_path: Path) -> None:
    (tmp_path / "test.jsonl").write_text('{"q": 1}\nnot json\n', encoding="utf-8")
    task = Task(config(dataset_path="test.jsonl", test_split="test"), base_dir=tmp_path)
    with pytest.raises(TaskDocsError, match="line 2"):
        task.eval_docs()
    with pytest.raises(TaskDocsError, match=r"docs\[1\]: a doc must be a mapping"):
        Task(config(), docs=[{"q": 1}, "text"])  # type: ignore[list-item]


def test_no_data_at_all(tmp_path: Path) -> None:
    with pytest.raises(TaskDocsError, match="set dataset_path or custom_dataset"):
        Task(config(test_split="test"), base_dir=tmp_path).eval_docs()


def test_builder_name_without_data_files(tmp_path: Path) -> None:
    with pytest.raises(TaskDocsError, match="data_files"):
        open_dataset(config(dataset_path="json"), base_dir=tmp_path)


def test_missing_data_file(tmp_path: Path) -> None:
    cfg = config(dataset_path="csv", dataset_kwargs={"data_files": {"test": "gone.csv"}})
    with pytest.raises(TaskDocsError, match="data file not found"):
        open_dataset(cfg, base_dir=tmp_path)


def test_load_docs_file_for_the_docs_option(tmp_path: Path) -> None:
    assert load_docs_file(jsonl(tmp_path / "docs.jsonl", ROWS)) == ROWS
    with pytest.raises(TaskDocsError, match="no such file"):
        load_docs_file(tmp_path / "absent.jsonl")
    (tmp_path / "docs.txt").write_text("x", encoding="utf-8")
    with pytest.raises(TaskDocsError, match="cannot tell the format"):
        load_docs_file(tmp_path / "docs.txt")
