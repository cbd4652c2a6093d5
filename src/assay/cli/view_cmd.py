"""``assay view FILE.json``: open an exported run in the web UI, without its database.

The export is read into a temporary SQLite file (``operations.run_import``: validated row by
row, a bad file is one line and exit 2), the server runs over it on loopback, and the
temporary store is removed when the server stops: whatever a reviewer changes there is a
scratch copy, the file is never written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import typer

from assay.cli.common import CliError, console
from assay.cli.serve import APP_FACTORY


def view(
    file: Annotated[Path, typer.Argument(help="A run exported as JSON (assay runs export).")],
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
) -> None:
    """Open an exported run (JSON) in the web UI from a temporary store; Ctrl-C stops it."""
    from assay.operations.run_import import RunImportError, import_run
    from assay.server import security
    from assay.store import open_store

    folder = Path(tempfile.mkdtemp(prefix="assay-view-"))
    try:
        url = f"sqlite:///{folder / 'view.db'}"
        store = open_store(url)
        try:
            record = import_run(file, store)
        except RunImportError as exc:
            raise CliError(str(exc)) from exc
        finally:
            store.close()
        import uvicorn

        host = "127.0.0.1"
        os.environ["ASSAY_DATABASE_URL"] = url
        os.environ[security.BIND_HOST_ENV] = host
        os.environ.setdefault("ASSAY_SERVER_DATA_DIR", str(folder))
        page = f"http://{host}:{port}/runs/{quote(record.id, safe='')}"
        console.print(
            f"run {record.id[:8]} from {file.name} ({record.completed_results:,} results): "
            f"{page} (a temporary copy; Ctrl-C stops the viewer)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level="warning")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
