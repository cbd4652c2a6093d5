"""Persistence: datasets with versioned items, runs with their results, the model cache.

``open_store()`` opens (and migrates) the database — an SQLite file by default, PostgreSQL
when ``ASSAY_DATABASE_URL`` says so — and returns a ``Store`` with ``.datasets`` and
``.runs`` repositories. ``StoreSink`` plugs a store into the runner.
"""

from __future__ import annotations

from assay.store.cache import StoreModelCache
from assay.store.certificates_repo import (
    Certificate,
    CertificateNotFoundError,
    CertificateRepository,
)
from assay.store.datasets_repo import DatasetRepository
from assay.store.engine import DATABASE_URL_ENV, Store, open_store, resolve_url, using_store
from assay.store.errors import (
    AmbiguousRunIdError,
    DatasetExistsError,
    DatasetNotFoundError,
    DatasetVersionNotFoundError,
    DuplicateItemError,
    DuplicateResultError,
    InvalidItemIdError,
    ItemExistsError,
    ItemNotFoundError,
    RunExistsError,
    RunLeasedError,
    RunNotFoundError,
    StoreError,
    StoreUnavailableError,
    StoreWriteError,
)
from assay.store.records import DatasetInfo, DatasetVersion, ItemVersion
from assay.store.runs_repo import RunRepository
from assay.store.sink import StoreSink

__all__ = [
    "DATABASE_URL_ENV",
    "AmbiguousRunIdError",
    "Certificate",
    "CertificateNotFoundError",
    "CertificateRepository",
    "DatasetExistsError",
    "DatasetInfo",
    "DatasetNotFoundError",
    "DatasetRepository",
    "DatasetVersion",
    "DatasetVersionNotFoundError",
    "DuplicateItemError",
    "DuplicateResultError",
    "InvalidItemIdError",
    "ItemExistsError",
    "ItemNotFoundError",
    "ItemVersion",
    "RunExistsError",
    "RunLeasedError",
    "RunNotFoundError",
    "RunRepository",
    "Store",
    "StoreError",
    "StoreModelCache",
    "StoreSink",
    "StoreUnavailableError",
    "StoreWriteError",
    "open_store",
    "resolve_url",
    "using_store",
]
