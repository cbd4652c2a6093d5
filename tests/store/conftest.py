"""Fixtures of the store tests: one suite, two real databases.

``store_url`` is parametrised over SQLite (a file in ``tmp_path``) and PostgreSQL (the
server named by ``ASSAY_TEST_POSTGRES_URL``; every test gets its own freshly created schema,
dropped afterwards, so tests never see each other's rows). Without that variable the
PostgreSQL cases are skipped — unless ``CI`` is set: CI must never silently skip them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url

from assay.store import Store, open_store

POSTGRES_ENV = "ASSAY_TEST_POSTGRES_URL"


def postgres_base_url() -> str:
    """The test server's URL, or skip (fail under CI) when there is none."""
    url = os.environ.get(POSTGRES_ENV)
    if url:
        return url
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {POSTGRES_ENV} is not: .ci/run should have started PostgreSQL")
    pytest.skip(f"PostgreSQL store tests need {POSTGRES_ENV} (.ci/run starts a server and sets it)")


@pytest.fixture
def postgres_schema_url() -> Iterator[str]:
    """A URL whose ``search_path`` is a new, empty schema (dropped after the test)."""
    base = postgres_base_url()
    schema = f"assay_test_{secrets.token_hex(6)}"
    admin = create_engine(make_url(base).set(drivername="postgresql+psycopg"))
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's database: no URL from the environment, cwd in tmp."""
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("postgres_schema_url")
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.close()
