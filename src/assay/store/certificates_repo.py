"""Calibration certificates: what a calibration measured, bound to the scorer it measured.

A certificate is evidence that one exact scorer configuration (its fingerprint: type,
params, judge model, prompt text) agrees with human labels on one exact labelled data set
(``data_key``). It is written once and never updated: a changed scorer gets a new
certificate from a new calibration, and the old one stays as history (and lets a lookup say
that the scorer's certificate is *stale* and what changed).
"""

from __future__ import annotations

import builtins
import time
import uuid
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from assay.store.db import Database
from assay.store.errors import StoreError
from assay.store.tables import calibration_certificates

_table = calibration_certificates


class CertificateNotFoundError(StoreError, LookupError):
    """No certificate with this id (or id prefix)."""


class Certificate(BaseModel):
    """One calibration's outcome (see the module docstring).

    ``statistics`` maps a statistic's plain name (``kappa``, ``spearman``) to its estimate
    ``{value, ci_low, ci_high, n}``; ``gates`` lists each gate with its outcome; ``passed``
    is true when there were gates and every one passed (a certificate without gates is
    stored as not passed: it certifies nothing).
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    fingerprint: str
    fingerprint_parts: dict[str, Any]
    scorer_type: str
    scorer_label: str
    judge_model: str | None = None
    data_key: str
    run_id: str | None = None
    kind: str
    n: int
    statistics: dict[str, dict[str, Any]]
    gates: list[dict[str, Any]] = Field(default_factory=list)
    passed: bool
    created_at: float = Field(default_factory=time.time)


class CertificateRepository:
    """Adds and looks up certificates (newest first everywhere)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, certificate: Certificate) -> Certificate:
        """Store ``certificate`` (one insert; it is either there whole or not at all)."""
        with self._db.write() as conn:
            conn.execute(sa.insert(_table).values(**certificate.model_dump()))
        return certificate

    def get(self, certificate_id: str) -> Certificate:
        """The certificate with this id or unique id prefix."""
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(_table).where(_table.c.id.startswith(certificate_id, autoescape=True))
            ).all()
        if len(rows) != 1:
            found = "no" if not rows else f"{len(rows)}"
            raise CertificateNotFoundError(
                f"{found} calibration certificate(s) with id {certificate_id!r}"
            )
        return _certificate(rows[0])

    def for_fingerprint(self, fingerprint: str) -> builtins.list[Certificate]:
        """Every certificate of exactly this scorer configuration, newest first."""
        query = (
            sa.select(_table)
            .where(_table.c.fingerprint == fingerprint)
            .order_by(_table.c.created_at.desc(), _table.c.id.desc())
        )
        with self._db.read() as conn:
            return [_certificate(row) for row in conn.execute(query).all()]

    def for_scorer(self, scorer_type: str, scorer_label: str) -> builtins.list[Certificate]:
        """Every certificate of any configuration of this scorer type and label, newest
        first (the candidates for a "stale" verdict when the fingerprint matches none)."""
        query = (
            sa.select(_table)
            .where(_table.c.scorer_type == scorer_type, _table.c.scorer_label == scorer_label)
            .order_by(_table.c.created_at.desc(), _table.c.id.desc())
        )
        with self._db.read() as conn:
            return [_certificate(row) for row in conn.execute(query).all()]

    def list(self, *, limit: int = 50) -> builtins.list[Certificate]:
        """The newest certificates."""
        query = (
            sa.select(_table).order_by(_table.c.created_at.desc(), _table.c.id.desc()).limit(limit)
        )
        with self._db.read() as conn:
            return [_certificate(row) for row in conn.execute(query).all()]


def _certificate(row: sa.Row[Any]) -> Certificate:
    return Certificate.model_validate(dict(row._mapping))
