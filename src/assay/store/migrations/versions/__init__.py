"""Migration scripts, oldest first (alembic ignores this file)."""
