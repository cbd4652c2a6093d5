"""The HTTP server: the JSON API (``server.api``) and the web UI (``server.ui``) over the
same Python operations the CLI calls. Start it with ``assay serve`` or build the app with
``assay.server.app.create_app``; see docs/server.md."""
