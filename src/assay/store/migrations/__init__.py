"""Alembic migrations of the store, run by ``assay.store.engine.migrate`` (no alembic.ini)."""
