"""Store tests: the same suite against a real SQLite file and PostgreSQL."""
