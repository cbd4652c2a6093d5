"""An optimization asked for as data over the network (``POST /api/optimize``).

Like ``operations.run_requests`` for runs: a request chooses no file the server reads and no
folder it writes. It is ``OptimizeSettings`` (every setting of ``assay optimize
CONFIG.yaml``, the same model) with two differences:

* data: each split is a stored dataset (``dataset``, optionally ``version``; pinned to the
  version it has when the optimization starts) or inline items (``data``), which the server
  stores as a dataset ``optimization-<id>-<split>`` before starting, so a resume reads
  exactly the same items. Inline items without an ``id`` get ``<split>-<n>`` (so the test
  split's row 1 is not mistaken for train's row 1). There is no file path.
* ``run_dir`` (GEPA's state) is chosen by the server, under its data folder.

Models are model strings (``task_model``, ``reflection_model``). Which base URLs a request
may name is the server's policy (``server.base_urls``), checked before this module runs.

Everything that can be wrong is found before anything is stored: scorers (unknown type:
``UnknownScorerError``; bad params: ``FieldErrors`` at ``scorers[i].params.<name>``), models
and weights (``OptimizeConfigError`` with its ``key``), datasets (``DatasetNotFoundError``;
a version that does not exist: ``FieldErrors``), inline items and the splits they make (no
items, a test item also in train). Only then are inline items stored and the optimization
created; should that fail, the datasets just stored are removed again.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.datasets.errors import DatasetError
from assay.datasets.load import load_items
from assay.operations.run_requests import MAX_INLINE_ITEMS, RunRequest, check_run_request
from assay.operations.scorer_preview import FieldErrors, FieldProblem
from assay.optimize.config import DataRef, OptimizeConfig, OptimizeConfigError, OptimizeSettings
from assay.optimize.optimizer import StartedOptimization, check_settings, create_optimization
from assay.optimize.splits import make_splits
from assay.store import Store
from assay.types import Item

SPLITS = ("train", "val", "test")


class SplitData(BaseModel):
    """One split: a stored dataset (optionally at ``version``) or inline items."""

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = Field(
        default=None, min_length=1, max_length=255, description="A stored dataset's name or id."
    )
    version: int | None = Field(
        default=None, ge=0, description="The dataset's version (default: its current one)."
    )
    data: list[dict[str, Any]] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_INLINE_ITEMS,
        description="Inline items ({id?, input, expected_output?, ...}), stored as a dataset.",
    )

    @field_validator("data", mode="before")
    @classmethod
    def _not_a_file(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(
                "over HTTP 'data' is a list of items, not a file: the server reads no file a "
                "request names (import the file as a dataset and give 'dataset')"
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> SplitData:
        if (self.dataset is None) == (self.data is None):
            raise ValueError("give exactly one of 'dataset' (a stored dataset) and 'data' (items)")
        if self.version is not None and self.dataset is None:
            raise ValueError("'version' needs 'dataset'")
        return self


class OptimizeRequest(OptimizeSettings):
    """``assay optimize``'s config as an HTTP body: splits are ``SplitData``, no run_dir."""

    train: SplitData
    val: SplitData | None = Field(
        default=None, description="Validation split; none: a seeded split of 'train'."
    )
    test: SplitData | None = Field(
        default=None, description="Held-out split the winner is checked on (never selected on)."
    )
    run_dir: None = Field(
        default=None, description="Not accepted: the server chooses where GEPA's state goes."
    )

    @field_validator("run_dir", mode="before")
    @classmethod
    def _server_chooses(cls, value: Any) -> Any:
        if value is not None:
            raise ValueError("chosen by the server (under its data folder); leave it out")
        return value


def _field_error(loc: list[str | int], message: str) -> FieldErrors:
    return FieldErrors([FieldProblem(loc=loc, msg=message)])


def _inline_items(split: str, rows: list[dict[str, Any]]) -> list[Item]:
    numbered = [
        row if "id" in row else {"id": f"{split}-{n}", **row} for n, row in enumerate(rows, 1)
    ]
    try:
        return list(load_items(numbered))
    except DatasetError as exc:
        raise _field_error([split, "data"], str(exc)) from exc


def _stored_items(split: str, source: SplitData, store: Store) -> tuple[list[Item], DataRef]:
    assert source.dataset is not None
    info = store.datasets.get(source.dataset)  # not found: DatasetNotFoundError (404)
    version = info.version if source.version is None else source.version
    if version > info.version:
        raise _field_error(
            [split, "version"],
            f"dataset {info.name!r} has no version {version} (latest: {info.version})",
        )
    items = list(store.datasets.items(info.id, version))
    return items, DataRef(dataset=info.name, version=version)


def start_requested(
    request: OptimizeRequest,
    store: Store,
    *,
    data_dir: Path,
    optimization_id: str | None = None,
) -> StartedOptimization:
    """Check ``request``, store its inline items as datasets and the optimization itself
    (GEPA's state under ``data_dir/optimizations/<id>``); ``run()`` on the answer executes
    it. See the module docstring for what is checked before anything is stored."""
    optimization_id = optimization_id or uuid.uuid4().hex
    check_run_request(RunRequest.model_construct(scorers=request.scorers))
    check_settings(request)
    refs: dict[str, DataRef] = {}
    inline: dict[str, list[Item]] = {}
    items: dict[str, list[Item]] = {}
    for split in SPLITS:
        source: SplitData | None = getattr(request, split)
        if source is None:
            continue
        if source.data is not None:
            items[split] = inline[split] = _inline_items(split, source.data)
        else:
            items[split], refs[split] = _stored_items(split, source, store)
    try:
        make_splits(
            items["train"],
            items.get("val"),
            items.get("test"),
            seed=request.seed,
            val_fraction=request.val_fraction,
            labels={split: refs[split].label if split in refs else "data" for split in items},
        )
    except ValueError as exc:
        split = str(exc).partition(":")[0]
        raise OptimizeConfigError(f"key {exc}", key=split if split in SPLITS else None) from exc

    created: list[str] = []
    try:
        for split, rows in inline.items():
            name = f"optimization-{optimization_id[:12]}-{split}"
            store.datasets.create(
                name,
                description=f"the inline {split} items of optimization {optimization_id}",
                metadata={"optimization_id": optimization_id, "split": split},
            )
            created.append(name)
            version = store.datasets.add_items(name, rows, note="stored by POST /api/optimize")
            refs[split] = DataRef(dataset=name, version=version)
        settings = request.model_dump(exclude={*SPLITS, "run_dir"})
        config = OptimizeConfig.model_validate(
            {
                **settings,
                **{split: ref.model_dump(exclude_none=True) for split, ref in refs.items()},
                "run_dir": str(data_dir / "optimizations" / optimization_id),
            }
        )
        return create_optimization(config, store, optimization_id=optimization_id)
    except BaseException:
        for name in created:
            with contextlib.suppress(Exception):
                store.datasets.delete(name)
        raise
