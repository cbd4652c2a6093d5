"""Alembic environment: runs the migrations on the connection ``open_store`` hands over.

Why only online mode with a given connection: the caller has already taken the migration
lock (SQLite write lock or PostgreSQL advisory lock) on that very connection, and the
migration must run inside it. New revisions are written with
``alembic.command.revision(config, autogenerate=True)`` on a config from
``assay.store.engine._alembic_config``; ``tables.metadata`` is the target.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from assay.store.tables import compare_type, is_described, metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "assay's migrations run through assay.store.open_store(), which passes a connection "
        "in config.attributes['connection']; offline (SQL script) mode is not supported"
    )

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things: later migrations copy tables
    compare_type=compare_type,  # SQLite reflects JSON_TEXT as TEXT (tables.compare_type)
    include_name=is_described,  # the SQLite text index is a virtual table (0010)
)
with context.begin_transaction():
    context.run_migrations()
