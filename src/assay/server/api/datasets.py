"""``/api/datasets``: list, create, rename, delete, import a file (upload), items, versions,
history."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, UploadFile
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from assay.datasets.errors import DatasetError, MappingError
from assay.operations.datasets import import_file
from assay.operations.scorer_preview import FieldErrors, FieldProblem
from assay.server.api.deps import MAX_OFFSET, StoreDep, responses
from assay.store import DatasetInfo, DatasetVersion, ItemVersion
from assay.store.datasets_repo import check_dataset_name
from assay.types import Item

router = APIRouter(tags=["datasets"])

UPLOAD_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
MAX_PAGE = 1000


def _checked_name(value: str) -> str:
    """The store's name rule as a field error (422 naming ``name``), before any write."""
    try:
        return check_dataset_name(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


class DatasetCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255, pattern=r"\S")
    description: str | None = Field(default=None, max_length=10_000)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _checked_name(value)


class DatasetRename(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255, description="The new name.")

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _checked_name(value)


class ImportResult(BaseModel):
    dataset: DatasetInfo
    read: int
    """Items read from the file (all stored as one new version, or none on an error)."""


class ItemsPage(BaseModel):
    items: list[Item]
    total: int
    offset: int
    limit: int
    version: int


@router.get("/datasets", response_model=list[DatasetInfo])
def list_datasets(store: StoreDep) -> list[DatasetInfo]:
    return store.datasets.list()


@router.post("/datasets", response_model=DatasetInfo, status_code=201, responses=responses(409))
def create_dataset(body: DatasetCreate, store: StoreDep) -> DatasetInfo:
    return store.datasets.create(body.name, description=body.description, metadata=body.metadata)


@router.patch("/datasets/{name:path}", response_model=DatasetInfo, responses=responses(404, 409))
def rename_dataset(name: str, body: DatasetRename, store: StoreDep) -> DatasetInfo:
    """Rename a dataset; runs on it follow the new name. A taken name is a 409."""
    return store.datasets.rename(name, body.name)


@router.delete("/datasets/{name:path}", status_code=204, responses=responses(404))
def delete_dataset(name: str, store: StoreDep) -> None:
    """Delete a dataset with every version and item. Runs on it stay (with its name and
    version, no longer linked)."""
    store.datasets.delete(name)


def _upload_format(filename: str, fmt: str | None) -> str:
    if fmt is not None:
        return fmt
    suffix = Path(filename).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise FieldErrors(
            [
                FieldProblem(
                    loc=["file"],
                    msg=f"cannot tell the format of {filename!r}: name it .jsonl, .csv or "
                    ".parquet, or give the form field 'format'",
                )
            ]
        )
    return UPLOAD_SUFFIXES[suffix]


@router.post(
    "/datasets/{name:path}/import", response_model=ImportResult, responses=responses(404, 409)
)
async def import_dataset_file(
    name: str,
    store: StoreDep,
    file: Annotated[UploadFile, File(description="JSONL, CSV or Parquet")],
    map: Annotated[list[str] | None, Form(description="field=column, repeatable")] = None,
    format: Annotated[Literal["jsonl", "csv", "parquet"] | None, Form()] = None,
    create: Annotated[bool, Form()] = True,
    upsert: Annotated[bool, Form()] = False,
    skip_existing: Annotated[bool, Form()] = False,
    description: Annotated[
        str | None, Form(max_length=10_000, description="Of a dataset the import creates.")
    ] = None,
) -> ImportResult:
    """The same all-or-nothing import as ``assay datasets import``: every row validates
    and is stored as one new version, or nothing is stored. The upload is copied to a
    temporary file whose name the server chooses (never the client's path)."""
    if upsert and skip_existing:
        raise FieldErrors(
            [FieldProblem(loc=["skip_existing"], msg="choose one of upsert and skip_existing")]
        )
    original = re.sub(r"[^\w.\- ]", "_", Path(file.filename or "upload").name)[:200]
    fmt = _upload_format(original, format)
    with tempfile.TemporaryDirectory(prefix="assay-upload-") as tmp:
        path = Path(tmp) / f"upload.{fmt}"
        with path.open("wb") as out:
            await run_in_threadpool(shutil.copyfileobj, file.file, out)
        try:
            info, count = await run_in_threadpool(
                lambda: import_file(
                    store,
                    path,
                    dataset=name,
                    fmt=fmt,
                    mapping=map or None,
                    create=create,
                    note=f"import {original}",
                    upsert=upsert,
                    skip_existing=skip_existing,
                    description=description or None,
                )
            )
        except DatasetError as exc:
            # the message names the temporary copy; the user knows their file by its name
            message = str(exc).replace(str(path), original)
            where = "map" if isinstance(exc, MappingError) else "file"
            raise FieldErrors([FieldProblem(loc=[where], msg=message)]) from exc
    return ImportResult(dataset=info, read=count)


@router.get("/datasets/{name:path}/items", response_model=ItemsPage, responses=responses(404))
def dataset_items(
    name: str,
    store: StoreDep,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    version: Annotated[int | None, Query(ge=0)] = None,
) -> ItemsPage:
    info = store.datasets.get(name)
    pinned = info.version if version is None else version
    items = list(store.datasets.items(info.id, pinned, offset=offset, limit=limit))
    total = store.datasets.count_items(info.id, pinned)
    return ItemsPage(items=items, total=total, offset=offset, limit=limit, version=pinned)


@router.get(
    "/datasets/{name:path}/versions", response_model=list[DatasetVersion], responses=responses(404)
)
def dataset_versions(name: str, store: StoreDep) -> list[DatasetVersion]:
    return store.datasets.versions(name)


@router.get(
    "/datasets/{name:path}/items/{item_id:path}/history",
    response_model=list[ItemVersion],
    responses=responses(404),
)
def item_history(name: str, item_id: str, store: StoreDep) -> list[ItemVersion]:
    """Every version of the item, oldest first (deletions included)."""
    history = store.datasets.item_history(name, item_id)
    if not history:
        from assay.store import ItemNotFoundError

        raise ItemNotFoundError(name, [item_id])
    return history
